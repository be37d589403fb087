import { Timestamp, type DocumentSnapshot, type Firestore, type Transaction } from "firebase-admin/firestore";
import { z } from "zod";
import { withDeadlines } from "../core/deadline";
import { documentAt, readDocument, timestamp, oncePerDatabase } from "../core/documents";

/**
 * `payoutAccounts/{publisherId}`: a publisher's Stripe connected account (contract §20), created
 * by the publisher's first `POST /developers/payouts/account` and kept current by the webhook's
 * `account.updated`.
 */

const payoutAccountDocument = z.object({
  accountId: z.string(),
  developerId: z.string(),
  chargesEnabled: z.boolean(),
  payoutsEnabled: z.boolean(),
  requirementsDue: z.array(z.string()),
  /** The time of the last `account.updated` applied (Stripe does not deliver in order); null before the first. */
  stripeEventCreated: timestamp.nullable(),
  createdAt: timestamp,
  updatedAt: timestamp,
});

export interface PayoutAccountRecord {
  publisherId: string;
  accountId: string;
  developerId: string;
  chargesEnabled: boolean;
  payoutsEnabled: boolean;
  requirementsDue: string[];
  stripeEventCreated: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export const payoutAccountStore = oncePerDatabase((db: Firestore) => {
  const collection = db.collection("payoutAccounts");
  const read = (snapshot: DocumentSnapshot): PayoutAccountRecord | null => {
    const stored = readDocument(payoutAccountDocument, snapshot);
    return (
      stored && {
        ...stored,
        publisherId: snapshot.id,
        stripeEventCreated: stored.stripeEventCreated?.toDate() ?? null,
        createdAt: stored.createdAt.toDate(),
        updatedAt: stored.updatedAt.toDate(),
      }
    );
  };
  return withDeadlines("Firestore", {
    ref: (publisherId: string) => documentAt(collection, publisherId),
    read,
    async get(publisherId: string): Promise<PayoutAccountRecord | null> {
      return read(await documentAt(collection, publisherId).get());
    },
    async getMany(publisherIds: string[]): Promise<Map<string, PayoutAccountRecord>> {
      if (publisherIds.length === 0) return new Map();
      const found = (await db.getAll(...publisherIds.map((id) => documentAt(collection, id)))).map(read);
      return new Map(found.filter((account): account is PayoutAccountRecord => account !== null).map((account) => [account.publisherId, account]));
    },
    setIn(tx: Transaction, account: PayoutAccountRecord): void {
      const { publisherId, stripeEventCreated, createdAt, updatedAt, ...fields } = account;
      tx.set(documentAt(collection, publisherId), {
        ...fields,
        stripeEventCreated: stripeEventCreated ? Timestamp.fromDate(stripeEventCreated) : null,
        createdAt: Timestamp.fromDate(createdAt),
        updatedAt: Timestamp.fromDate(updatedAt),
      });
    },
  });
});
