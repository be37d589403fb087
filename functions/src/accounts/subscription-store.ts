import { FieldValue, Timestamp, type DocumentSnapshot, type Firestore, type Transaction, type WriteBatch } from "firebase-admin/firestore";
import { z } from "zod";
import { SUBSCRIPTION_STATUSES, type SubscriptionStatus } from "../access/rules";
import { withDeadlines } from "../core/deadline";
import { documentAt, readDocument, timestamp, oncePerDatabase } from "../core/documents";

/**
 * `subscriptions/{businessId}`: written by billing (and the operator CLI), read by the service.
 * A write with a seat quantity marks it `seatsPending` until the seat balancer (seats/balance.ts)
 * has worked the seats out for it: waiters seated, or the newest seats taken back (§25).
 */

const subscriptionDocument = z.object({
  status: z.enum(SUBSCRIPTION_STATUSES),
  plan: z.string(),
  seats: z.number().int().nonnegative().optional(),
  currentPeriodEnd: timestamp,
  cancelAtPeriodEnd: z.boolean().optional(),
  entitlements: z.array(z.string()),
  stripeSubscriptionId: z.string().optional(),
  stripeEventCreated: timestamp.optional(),
  seatsPending: z.boolean().optional(),
});

export interface SubscriptionRecord {
  status: SubscriptionStatus;
  plan: string;
  seats: number | null;
  currentPeriodEnd: Date;
  cancelAtPeriodEnd: boolean;
  entitlements: string[];
  /** Present when Stripe manages the subscription (billing/): which one, and the time of the last event that wrote it. */
  stripe: { subscriptionId: string; eventCreated: Date } | null;
}

export const subscriptionStore = oncePerDatabase((db: Firestore) => {
  const collection = db.collection("subscriptions");
  const read = (snapshot: DocumentSnapshot): SubscriptionRecord | null => {
    const stored = readDocument(subscriptionDocument, snapshot);
    return (
      stored && {
        status: stored.status,
        plan: stored.plan,
        seats: stored.seats ?? null,
        currentPeriodEnd: stored.currentPeriodEnd.toDate(),
        cancelAtPeriodEnd: stored.cancelAtPeriodEnd ?? false,
        entitlements: stored.entitlements,
        stripe:
          stored.stripeSubscriptionId && stored.stripeEventCreated
            ? { subscriptionId: stored.stripeSubscriptionId, eventCreated: stored.stripeEventCreated.toDate() }
            : null,
      }
    );
  };
  const toDocument = (subscription: SubscriptionRecord) => ({
    status: subscription.status,
    plan: subscription.plan,
    ...(subscription.seats !== null ? { seats: subscription.seats } : {}),
    currentPeriodEnd: Timestamp.fromDate(subscription.currentPeriodEnd),
    cancelAtPeriodEnd: subscription.cancelAtPeriodEnd,
    entitlements: subscription.entitlements,
    ...(subscription.stripe
      ? { stripeSubscriptionId: subscription.stripe.subscriptionId, stripeEventCreated: Timestamp.fromDate(subscription.stripe.eventCreated) }
      : {}),
    ...(subscription.seats !== null ? { seatsPending: true } : {}),
  });
  const ref = (businessId: string) => documentAt(collection, businessId);
  const pending = collection.where("seatsPending", "==", true);
  return withDeadlines("Firestore", {
    ref,
    read,
    /** Read in the transaction that works seats out for its quantity. */
    async get(tx: Transaction, businessId: string): Promise<SubscriptionRecord | null> {
      return read(await tx.get(ref(businessId)));
    },
    /** One batched read of several businesses' subscriptions, in their order. */
    async getMany(businessIds: string[]): Promise<(SubscriptionRecord | null)[]> {
      if (businessIds.length === 0) return [];
      return (await db.getAll(...businessIds.map((id) => documentAt(collection, id)))).map(read);
    },
    setIn(writer: Transaction | WriteBatch, businessId: string, subscription: SubscriptionRecord): void {
      (writer as WriteBatch).set(documentAt(collection, businessId), toDocument(subscription));
    },
    /** The seats are to be worked out again for the quantity this transaction read (the shards' layout changed: `migrate seats`). */
    seatsPendingIn(tx: Transaction, businessId: string): void {
      tx.update(ref(businessId), { seatsPending: true });
    },
    /** The seats are worked out for the quantity this transaction read. */
    seatsBalancedIn(tx: Transaction, businessId: string): void {
      tx.update(ref(businessId), { seatsPending: FieldValue.delete() });
    },
    /** The subscriptions whose seats wait for the balancer (what the `seatBalance` trigger acts on). */
    pendingSeatBalancesQuery: () => pending,
    /** Businesses whose seats wait for the balancer, a page at a time (the sweep). */
    async pendingSeatBalances(limit: number): Promise<string[]> {
      return (await pending.select().limit(limit).get()).docs.map((doc) => doc.id);
    },
  });
});
