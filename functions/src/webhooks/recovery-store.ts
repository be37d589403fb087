import { Timestamp, type Firestore, type Transaction } from "firebase-admin/firestore";
import { z } from "zod";
import { withDeadlines } from "../core/deadline";
import { documentAt, oncePerDatabase, readDocument, timestamp } from "../core/documents";

/**
 * `webhookRecoveries/{autoId}`: a `recover` asked for (contract §21): an endpoint's failed
 * messages created since a time, to be sent again. Recorded in the request's transaction with its
 * audit entry; the webhook sweep makes the failed deliveries due a page at a time (`after`: the
 * place of the last one made due), so that any number of them is queued without one
 * request, or one transaction, reading them all; deleted when none is left.
 */

const recoveryDocument = z.object({ endpointId: z.string(), since: timestamp, after: z.object({ createdAt: timestamp, id: z.string() }).nullable(), at: timestamp });

export interface RecoveryRecord {
  id: string;
  endpointId: string;
  since: Date;
  /** Where the next page starts: after this failed delivery (null: from `since`). */
  after: RecoveryPlace | null;
}

/** A delivery in a recovery's order: by creation, then id. */
export interface RecoveryPlace {
  createdAt: Date;
  id: string;
}

export const recoveryStore = oncePerDatabase((db: Firestore) => {
  const collection = db.collection("webhookRecoveries");
  return {
    addIn(tx: Transaction, endpointId: string, since: Date, now: Date): void {
      tx.create(collection.doc(), { endpointId, since: Timestamp.fromDate(since), after: null, at: Timestamp.fromDate(now) });
    },
    /** Where the recovery stands now: a page made due up to `after`, or done (deleted). */
    advanceIn(tx: Transaction, id: string, after: RecoveryPlace | null): void {
      if (after === null) tx.delete(documentAt(collection, id));
      else tx.update(documentAt(collection, id), { after: { createdAt: Timestamp.fromDate(after.createdAt), id: after.id } });
    },
    ...withDeadlines("Firestore", {
      /** The oldest recoveries asked for. */
      async oldest(limit: number): Promise<RecoveryRecord[]> {
        const { docs } = await collection.orderBy("at").limit(limit).get();
        return docs.flatMap((doc) => {
          const stored = readDocument(recoveryDocument, doc);
          return stored ? [{ id: doc.id, endpointId: stored.endpointId, since: stored.since.toDate(), after: stored.after ? { createdAt: stored.after.createdAt.toDate(), id: stored.after.id } : null }] : [];
        });
      },
    }),
  };
});
