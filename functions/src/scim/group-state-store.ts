import { FieldPath, FieldValue, Timestamp, type Firestore, type QueryDocumentSnapshot, type Transaction } from "firebase-admin/firestore";
import { randomInt } from "node:crypto";
import { z } from "zod";
import { withDeadlines } from "../core/deadline";
import { documentAt, oncePerDatabase, readDocument, timestamp } from "../core/documents";

/**
 * `businesses/{businessId}/scimGroupStates/{groupId}_{0..63}`: how often a SCIM group changed (its
 * `revision`, the sum over the shards, whence its ETag) and when it last did (the latest of
 * theirs) (§22, §25). A group's name and ids live in the business's document, which every
 * membership change reads; its members on their own documents. Moving members in or out of a
 * group adds one to a shard, a blind increment that reads nothing; each process takes a group's
 * shards in turn from a random one, so that an identity provider pushing a large group's members, PATCH
 * after PATCH, writes each shard at a 64th of its rate (a group PATCHed 33 times a second from two
 * processes: about half a write a second per shard). A shard is made by its first write, so a
 * group that changes rarely has few: the version is read from the shards that exist (one range
 * of document ids), where it is wanted (an answer's ETag, a list), and all 64 are read and held
 * in the transaction of an `If-Match`. A group without any (made before they existed) is at
 * revision 0. The first 8 shards are where revisions were kept before there were 64.
 */

const STATE_SHARDS = 64;

const stateDocument = z.object({ revision: z.number().int(), lastModified: timestamp });

export interface GroupState {
  revision: number;
  lastModified: Date | null;
}

const NONE: GroupState = { revision: 0, lastModified: null };

const withShard = (state: GroupState, snapshot: FirebaseFirestore.DocumentSnapshot): GroupState => {
  const stored = readDocument(stateDocument, snapshot);
  if (!stored) return state;
  const at = stored.lastModified.toDate();
  return { revision: state.revision + stored.revision, lastModified: state.lastModified && state.lastModified > at ? state.lastModified : at };
};

/** The group a shard's document id belongs to (`{groupId}_{n}`; a group id may itself hold `_`). */
const groupOf = (snapshot: QueryDocumentSnapshot) => snapshot.id.slice(0, snapshot.id.lastIndexOf("_"));

/** The shard this process wrote last, per group it changed lately (a group's first from a random one). */
const lastShards = new Map<string, number>();
/** How many groups `lastShards` remembers; past that it starts again (a group then from a random shard). */
const REMEMBERED_GROUPS = 10_000;

/** The shard a group's next change is counted in: its shards in turn, so that none takes two writes before each took one. */
function nextShardOf(path: string): number {
  if (lastShards.size >= REMEMBERED_GROUPS && !lastShards.has(path)) lastShards.clear();
  const next = ((lastShards.get(path) ?? randomInt(STATE_SHARDS)) + 1) % STATE_SHARDS;
  lastShards.set(path, next);
  return next;
}

export const groupStateStore = oncePerDatabase((db: Firestore) => {
  const states = (businessId: string) => documentAt(db.collection("businesses"), businessId).collection("scimGroupStates");
  const shard = (businessId: string, groupId: string, index: number) => documentAt(states(businessId), `${groupId}_${index}`);
  const shards = (businessId: string, groupId: string) => Array.from({ length: STATE_SHARDS }, (_, index) => shard(businessId, groupId, index));
  return {
    /** The group's state, every shard read (and held) in the transaction: for an `If-Match`. */
    async getIn(tx: Transaction, businessId: string, groupId: string): Promise<GroupState> {
      return (await tx.getAll(...shards(businessId, groupId))).reduce(withShard, NONE);
    },
    ...withDeadlines("Firestore", {
      /** One group's state, from the shards it has (`_` sorts after every digit, `` ` `` just after `_`). */
      async get(businessId: string, groupId: string): Promise<GroupState> {
        const snapshot = await states(businessId).where(FieldPath.documentId(), ">=", `${groupId}_`).where(FieldPath.documentId(), "<", `${groupId}\``).get();
        return snapshot.docs.filter((doc) => groupOf(doc) === groupId).reduce(withShard, NONE);
      },
      /** The states of these groups of the business, in the order asked, from one query (the shards that exist). */
      async getAll(businessId: string, groupIds: readonly string[]): Promise<GroupState[]> {
        const byGroup = new Map<string, GroupState>();
        for (const doc of (await states(businessId).get()).docs) byGroup.set(groupOf(doc), withShard(byGroup.get(groupOf(doc)) ?? NONE, doc));
        return groupIds.map((groupId) => byGroup.get(groupId) ?? NONE);
      },
    }),
    /** The group changed: one more revision, on the shard this process writes next, read by nobody here. */
    changedIn(tx: Transaction, businessId: string, groupId: string, now: Date): void {
      tx.set(shard(businessId, groupId, nextShardOf(`${businessId}/${groupId}`)), { revision: FieldValue.increment(1), lastModified: Timestamp.fromDate(now) }, { merge: true });
    },
    deleteIn(tx: Transaction, businessId: string, groupId: string): void {
      for (const ref of shards(businessId, groupId)) tx.delete(ref);
    },
  };
});
