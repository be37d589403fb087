import { Timestamp, type Firestore, type Transaction } from "firebase-admin/firestore";
import { z } from "zod";
import { withDeadlines } from "../core/deadline";
import { documentAt, oncePerDatabase, readDocument, timestamp } from "../core/documents";

/**
 * `scimGroupRemovals/{businessId}_{groupId}`: a SCIM group deleted whose members still name it
 * (§25). The DELETE removes the group and records this in one transaction, whatever the group's
 * size; the group remover (group-removal.ts) then takes the group off its members, and the roles
 * and seats it gave, a bounded batch per transaction, and deletes this record when none is left.
 */

const removalDocument = z.object({ businessId: z.string(), groupId: z.string(), at: timestamp });

export interface GroupRemoval {
  businessId: string;
  groupId: string;
}

export const groupRemovalStore = oncePerDatabase((db: Firestore) => {
  const collection = db.collection("scimGroupRemovals");
  const ref = ({ businessId, groupId }: GroupRemoval) => documentAt(collection, `${businessId}_${groupId}`);
  return {
    addIn(tx: Transaction, removal: GroupRemoval, now: Date): void {
      tx.set(ref(removal), { ...removal, at: Timestamp.fromDate(now) });
    },
    doneIn(tx: Transaction, removal: GroupRemoval): void {
      tx.delete(ref(removal));
    },
    ...withDeadlines("Firestore", {
      /** The oldest removals not finished. */
      async pending(limit: number): Promise<GroupRemoval[]> {
        const snapshot = await collection.orderBy("at").limit(limit).get();
        return snapshot.docs.map((doc) => readDocument(removalDocument, doc)!).map(({ businessId, groupId }) => ({ businessId, groupId }));
      },
    }),
    /** Calls `onRemovals` with the removals not finished, now and whenever they change; returns the stop. */
    follow(onRemovals: (removals: GroupRemoval[]) => void, onError: (error: Error) => void): () => void {
      return collection.onSnapshot(
        (snapshot) => onRemovals(snapshot.docs.map((doc) => readDocument(removalDocument, doc)!).map(({ businessId, groupId }) => ({ businessId, groupId }))),
        onError,
      );
    },
  };
});
