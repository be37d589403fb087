import { Timestamp, type Firestore, type Transaction } from "firebase-admin/firestore";
import { z } from "zod";
import { withDeadlines } from "../core/deadline";
import { documentAt, oncePerDatabase, readDocument, timestamp } from "../core/documents";

/**
 * `businesses/{businessId}/scimGroupStates/{groupId}`: how often a SCIM group changed (`revision`,
 * its ETag's source) and when it last did (§22, §25). A group's name and ids live in the
 * business's document, which every membership change reads; its members on their own documents.
 * Moving members in or out of a group writes this document, not the business's, so a group's
 * PATCH costs the members it moves plus one document, whatever the group's size, and changes of
 * different groups never contend. A group without one (made before it existed) is at revision 0.
 */

const stateDocument = z.object({ revision: z.number().int(), lastModified: timestamp });

export interface GroupState {
  revision: number;
  lastModified: Date | null;
}

const NONE: GroupState = { revision: 0, lastModified: null };

export const groupStateStore = oncePerDatabase((db: Firestore) => {
  const ref = (businessId: string, groupId: string) => documentAt(documentAt(db.collection("businesses"), businessId).collection("scimGroupStates"), groupId);
  const read = (snapshot: FirebaseFirestore.DocumentSnapshot): GroupState => {
    const stored = readDocument(stateDocument, snapshot);
    return stored ? { revision: stored.revision, lastModified: stored.lastModified.toDate() } : NONE;
  };
  return {
    async getIn(tx: Transaction, businessId: string, groupId: string): Promise<GroupState> {
      return read(await tx.get(ref(businessId, groupId)));
    },
    ...withDeadlines("Firestore", {
      /** The states of these groups, in the order asked, in one batched read. */
      async getAll(businessId: string, groupIds: readonly string[]): Promise<GroupState[]> {
        if (groupIds.length === 0) return [];
        return (await db.getAll(...groupIds.map((groupId) => ref(businessId, groupId)))).map(read);
      },
    }),
    /** The group changed: the next revision, read as `before` in the same transaction. */
    changedIn(tx: Transaction, businessId: string, groupId: string, before: GroupState, now: Date): GroupState {
      const after = { revision: before.revision + 1, lastModified: now };
      tx.set(ref(businessId, groupId), { revision: after.revision, lastModified: Timestamp.fromDate(now) });
      return after;
    },
    deleteIn(tx: Transaction, businessId: string, groupId: string): void {
      tx.delete(ref(businessId, groupId));
    },
  };
});
