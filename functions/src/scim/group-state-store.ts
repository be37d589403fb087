import { FieldValue, Timestamp, type Firestore, type Transaction } from "firebase-admin/firestore";
import { randomInt } from "node:crypto";
import { z } from "zod";
import { withDeadlines } from "../core/deadline";
import { documentAt, oncePerDatabase, readDocument, timestamp } from "../core/documents";

/**
 * `businesses/{businessId}/scimGroupStates/{groupId}_{0..7}`: how often a SCIM group changed (its
 * `revision`, the sum over the shards, whence its ETag) and when it last did (the latest of
 * theirs) (§22, §25). A group's name and ids live in the business's document, which every
 * membership change reads; its members on their own documents. Moving members in or out of a
 * group adds one to a random shard, a blind increment that reads nothing: an identity provider
 * pushing a large group's members, PATCH after PATCH, writes no document more than a fraction of
 * its rate. The shards are read only where the version is wanted: an `If-Match`, an answer. A
 * group without any (made before they existed) is at revision 0.
 */

const STATE_SHARDS = 8;

const stateDocument = z.object({ revision: z.number().int(), lastModified: timestamp });

export interface GroupState {
  revision: number;
  lastModified: Date | null;
}

const sumOf = (snapshots: FirebaseFirestore.DocumentSnapshot[]): GroupState =>
  snapshots.reduce<GroupState>(
    (state, snapshot) => {
      const stored = readDocument(stateDocument, snapshot);
      if (!stored) return state;
      const at = stored.lastModified.toDate();
      return { revision: state.revision + stored.revision, lastModified: state.lastModified && state.lastModified > at ? state.lastModified : at };
    },
    { revision: 0, lastModified: null },
  );

export const groupStateStore = oncePerDatabase((db: Firestore) => {
  const states = (businessId: string) => documentAt(db.collection("businesses"), businessId).collection("scimGroupStates");
  const shards = (businessId: string, groupId: string) => Array.from({ length: STATE_SHARDS }, (_, shard) => documentAt(states(businessId), `${groupId}_${shard}`));
  return {
    /** The group's state, read (and held) in the transaction: for an `If-Match`. */
    async getIn(tx: Transaction, businessId: string, groupId: string): Promise<GroupState> {
      return sumOf(await tx.getAll(...shards(businessId, groupId)));
    },
    ...withDeadlines("Firestore", {
      /** The states of these groups, in the order asked, in one batched read. */
      async getAll(businessId: string, groupIds: readonly string[]): Promise<GroupState[]> {
        if (groupIds.length === 0) return [];
        const snapshots = await db.getAll(...groupIds.flatMap((groupId) => shards(businessId, groupId)));
        return groupIds.map((_, index) => sumOf(snapshots.slice(index * STATE_SHARDS, (index + 1) * STATE_SHARDS)));
      },
    }),
    /** The group changed: one more revision, on a shard of its own choosing, read by nobody here. */
    changedIn(tx: Transaction, businessId: string, groupId: string, now: Date): void {
      tx.set(shards(businessId, groupId)[randomInt(STATE_SHARDS)], { revision: FieldValue.increment(1), lastModified: Timestamp.fromDate(now) }, { merge: true });
    },
    deleteIn(tx: Transaction, businessId: string, groupId: string): void {
      for (const shard of shards(businessId, groupId)) tx.delete(shard);
    },
  };
});
