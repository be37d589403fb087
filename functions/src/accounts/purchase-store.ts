import { Timestamp, type DocumentSnapshot, type Firestore, type Transaction } from "firebase-admin/firestore";
import { z } from "zod";
import { PURCHASE_STATUSES, purchaseStatus, type PurchaseStatus } from "../access/rules";
import { withDeadlines } from "../core/deadline";
import { documentAt, readDocument, timestamp, oncePerDatabase } from "../core/documents";

/**
 * `purchases/{purchaseId}`: modules bought through Stripe (contract §20), written only by the
 * Stripe webhook's fulfilment (payments/). The id is Stripe's: the payment intent of a one-time
 * purchase, the subscription of a module subscription.
 *
 * `status` is what access reads; it is derived (access/rules `purchaseStatus`) from the facts kept
 * beside it: Stripe's own status of the payment or subscription (`baseStatus`), whether the
 * payment was refunded in full, and the state of a dispute. `completedAt` is when it first
 * granted paid access, which is when `module.purchase.completed` was sent.
 *
 * A module subscription bought at a price with a perpetual fallback (§27) keeps `fallback:
 * "perpetual"`, and `fallbackUntil` once its paid invoices earned one (it only moves forward). A
 * business's, once it ended, records its seat holders then in `fallbackHolders/{uid}`
 * (fallback-holder-store.ts) and when it did in `fallbackHoldersAt`.
 */

export const PURCHASE_MODELS = ["one_time", "subscription"] as const;
export type PurchaseModel = (typeof PURCHASE_MODELS)[number];
export const DISPUTE_STATES = ["open", "won", "lost"] as const;
export type DisputeState = (typeof DISPUTE_STATES)[number];

export const FALLBACK_KINDS = ["none", "perpetual"] as const;
export type FallbackKind = (typeof FALLBACK_KINDS)[number];

export type PurchaseOwner = { kind: "user" | "business"; id: string };
export const ownerKey = (owner: PurchaseOwner) => `${owner.kind}:${owner.id}`;

const purchaseDocument = z.object({
  moduleId: z.string(),
  publisherId: z.string(),
  owner: z.object({ kind: z.enum(["user", "business"]), id: z.string() }),
  ownerKey: z.string(),
  buyerUid: z.string(),
  model: z.enum(PURCHASE_MODELS),
  status: z.enum(PURCHASE_STATUSES),
  baseStatus: z.enum(PURCHASE_STATUSES),
  refunded: z.boolean(),
  dispute: z.enum(DISPUTE_STATES).nullable(),
  quantity: z.number().int().positive(),
  amount: z.number().int().nonnegative(),
  currency: z.string(),
  fee: z.number().int().nonnegative(),
  currentPeriodEnd: timestamp.nullable(),
  cancelAtPeriodEnd: z.boolean(),
  trial: z.boolean(),
  /** Missing on purchases written before it existed, which were completed when created. */
  completedAt: timestamp.nullable().optional(),
  /** Missing on purchases written before §27: none. */
  fallback: z.enum(FALLBACK_KINDS).optional(),
  fallbackUntil: timestamp.nullable().optional(),
  fallbackHoldersAt: timestamp.nullable().optional(),
  /** Whether its trial's first paid invoice was counted (§28); missing: not yet. */
  trialConverted: z.boolean().optional(),
  stripe: z.object({
    customerId: z.string().nullable(),
    paymentIntentId: z.string().nullable(),
    subscriptionId: z.string().nullable(),
  }),
  createdAt: timestamp,
  updatedAt: timestamp,
});

export interface PurchaseRecord {
  id: string;
  moduleId: string;
  publisherId: string;
  owner: PurchaseOwner;
  buyerUid: string;
  model: PurchaseModel;
  status: PurchaseStatus;
  baseStatus: PurchaseStatus;
  refunded: boolean;
  dispute: DisputeState | null;
  quantity: number;
  amount: number;
  currency: string;
  fee: number;
  currentPeriodEnd: Date | null;
  cancelAtPeriodEnd: boolean;
  trial: boolean;
  completedAt: Date | null;
  fallback: FallbackKind;
  fallbackUntil: Date | null;
  fallbackHoldersAt: Date | null;
  /** A trial whose first paid invoice arrived, counted once as a conversion (§28). */
  trialConverted: boolean;
  stripe: { customerId: string | null; paymentIntentId: string | null; subscriptionId: string | null };
  createdAt: Date;
  updatedAt: Date;
}

/** Firestore's `in` takes at most 30 values. */
const IN_LIMIT = 30;

export const purchaseStore = oncePerDatabase((db: Firestore) => {
  const collection = db.collection("purchases");
  const read = (snapshot: DocumentSnapshot): PurchaseRecord | null => {
    const stored = readDocument(purchaseDocument, snapshot);
    return (
      stored && {
        ...stored,
        id: snapshot.id,
        currentPeriodEnd: stored.currentPeriodEnd?.toDate() ?? null,
        completedAt: stored.completedAt === undefined ? stored.createdAt.toDate() : (stored.completedAt?.toDate() ?? null),
        fallback: stored.fallback ?? "none",
        fallbackUntil: stored.fallbackUntil?.toDate() ?? null,
        fallbackHoldersAt: stored.fallbackHoldersAt?.toDate() ?? null,
        trialConverted: stored.trialConverted ?? false,
        stripe: { customerId: stored.stripe.customerId, paymentIntentId: stored.stripe.paymentIntentId, subscriptionId: stored.stripe.subscriptionId },
        createdAt: stored.createdAt.toDate(),
        updatedAt: stored.updatedAt.toDate(),
      }
    );
  };
  const query = async (build: (base: FirebaseFirestore.Query) => FirebaseFirestore.Query) => (await build(collection).get()).docs.map((doc) => read(doc)!);
  return withDeadlines("Firestore", {
    ref: (purchaseId: string) => documentAt(collection, purchaseId),
    read,
    async get(purchaseId: string): Promise<PurchaseRecord | null> {
      return read(await documentAt(collection, purchaseId).get());
    },
    /** Every purchase of these owners (a user and their businesses), in as few queries as `in` allows. */
    async ofOwners(owners: PurchaseOwner[]): Promise<PurchaseRecord[]> {
      const keys = [...new Set(owners.map(ownerKey))];
      const chunks: string[][] = [];
      for (let start = 0; start < keys.length; start += IN_LIMIT) chunks.push(keys.slice(start, start + IN_LIMIT));
      return (await Promise.all(chunks.map((chunk) => query((base) => base.where("ownerKey", "in", chunk))))).flat();
    },
    /** One owner's purchases of one module, whatever their status. */
    ofOwnerAndModule: (owner: PurchaseOwner, moduleId: string) => query((base) => base.where("ownerKey", "==", ownerKey(owner)).where("moduleId", "==", moduleId)),
    ofModule: (moduleId: string) => query((base) => base.where("moduleId", "==", moduleId)),
    ofBuyer: (buyerUid: string) => query((base) => base.where("buyerUid", "==", buyerUid)),
    /** Every purchase of one module bought by any of these people (at most 30), for themselves or a business. */
    ofBuyersAndModule: (buyerUids: string[], moduleId: string) => query((base) => base.where("buyerUid", "in", [...new Set(buyerUids)].slice(0, IN_LIMIT)).where("moduleId", "==", moduleId)),
    /** The most recent purchases first, at most `limit`. */
    recent: (limit: number) => query((base) => base.orderBy("createdAt", "desc").limit(limit)),
    setIn(tx: Transaction, purchase: PurchaseRecord): void {
      const { id, currentPeriodEnd, completedAt, fallbackUntil, fallbackHoldersAt, createdAt, updatedAt, ...fields } = purchase;
      tx.set(documentAt(collection, id), {
        ...fields,
        fallbackUntil: fallbackUntil ? Timestamp.fromDate(fallbackUntil) : null,
        fallbackHoldersAt: fallbackHoldersAt ? Timestamp.fromDate(fallbackHoldersAt) : null,
        ownerKey: ownerKey(purchase.owner),
        status: purchaseStatus(purchase),
        currentPeriodEnd: currentPeriodEnd ? Timestamp.fromDate(currentPeriodEnd) : null,
        completedAt: completedAt ? Timestamp.fromDate(completedAt) : null,
        createdAt: Timestamp.fromDate(createdAt),
        updatedAt: Timestamp.fromDate(updatedAt),
      });
    },
  });
});
