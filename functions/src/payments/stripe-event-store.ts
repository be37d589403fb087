import { Timestamp, type DocumentSnapshot, type Firestore, type Transaction } from "firebase-admin/firestore";
import { DAY_MS } from "../core/time";
import { documentAt, writeReadAsMissing, oncePerDatabase } from "../core/documents";

/**
 * `stripeEvents/{eventId}`: the Stripe events this service has processed (§11, §20), so a replay changes
 * nothing. `expireAt` lets a Firestore TTL policy remove them once Stripe no longer retries
 * (firestore.indexes.json sets the policy).
 */

/** Stripe retries an event for up to 3 days; its id is remembered well past that. */
const KEPT_FOR_MS = 30 * DAY_MS;

export type StripeEventOutcome = "applied" | "stale" | "superseded";

/** What an event was about: the business (a plan subscription), the purchase, or the publisher (a payouts account). */
export type StripeEventSubject = { businessId: string } | { purchaseId: string } | { publisherId: string } | { paymentIntentId: string };

export const stripeEventStore = oncePerDatabase((db: Firestore) => {
  const collection = db.collection("stripeEvents");
  return {
    ref: (eventId: string) => documentAt(collection, eventId),
    processed: (snapshot: DocumentSnapshot) => snapshot.exists,
    /** Records an event the transaction has read as not processed. */
    recordIn(tx: Transaction, event: { id: string; type: string; created: number; subject: StripeEventSubject; outcome: StripeEventOutcome }, now: Date): void {
      writeReadAsMissing(tx, documentAt(collection, event.id), {
        type: event.type,
        created: Timestamp.fromMillis(event.created * 1000),
        ...event.subject,
        outcome: event.outcome,
        processedAt: Timestamp.fromDate(now),
        expireAt: Timestamp.fromMillis(now.getTime() + KEPT_FOR_MS),
      });
    },
  };
});
