import { createHash } from "node:crypto";
import { FieldPath, Timestamp, type Firestore, type Query, type Transaction } from "firebase-admin/firestore";
import { seatCount, type SeatStanding } from "../access/rules";
import { homeSeatShard } from "../access/seat-shards";
import { withDeadlines } from "../core/deadline";
import { documentAt, oncePerDatabase } from "../core/documents";
import type { MemberRecord } from "./business-records";
import { joinOrderOf, memberDocumentOf, memberFromSnapshot, seatOrderOf } from "./member-document";
import { seatShardStore } from "./seat-shard-store";

/**
 * `businesses/{businessId}/members/{uid}`: one document per membership (§25), and what is kept
 * with it in the same writes: the seat shards (seat-shard-store.ts), `scimKeys/{hash}` (which User holds a
 * SCIM userName or externalId, so that a duplicate has one winner under any concurrency) and
 * `users/{uid}/memberships/{businessId}` (the same member document, filed under the user, so that
 * a user's businesses are one small query of their own: a collection-group query would do, but
 * the emulator answers one by reading every member of every business). Every read of one member
 * is one document, whatever the size of the business.
 */


export type ScimKeyKind = "userName" | "externalId";
/** A SCIM key's document id: the kind and value hashed, as values may hold any character and any length. */
const scimKeyId = (kind: ScimKeyKind, value: string) => createHash("sha256").update(`${kind}\n${kind === "userName" ? value.toLowerCase() : value}`).digest("hex");

const scimKeysOf = (member: MemberRecord | null): [ScimKeyKind, string][] =>
  member?.scim ? [["userName", member.scim.userName], ...(member.scim.externalId !== null ? [["externalId", member.scim.externalId] as [ScimKeyKind, string]] : [])] : [];

/** The shard a member's seat is counted in (null without a seat): as the member's document records it. */
const seatShardOf = (member: MemberRecord | null) => (member?.seat ? (member.seatShard ?? homeSeatShard(member.uid)) : null);

/** Where a page of members starts: after this member in the list's order. */
export interface MemberPosition {
  at: Timestamp;
  uid: string;
}

export const memberStore = oncePerDatabase((db: Firestore) => {
  const business = (businessId: string) => documentAt(db.collection("businesses"), businessId);
  const members = (businessId: string) => business(businessId).collection("members");
  const ref = (businessId: string, uid: string) => documentAt(members(businessId), uid);
  const memberships = (uid: string) => documentAt(db.collection("users"), uid).collection("memberships");
  const membership = (uid: string, businessId: string) => documentAt(memberships(uid), businessId);
  const scimKey = (businessId: string, kind: ScimKeyKind, value: string) => documentAt(business(businessId).collection("scimKeys"), scimKeyId(kind, value));
  const read = memberFromSnapshot;
  const readAll = (docs: FirebaseFirestore.QueryDocumentSnapshot[]) => docs.map((doc) => read(doc)!);
  const get = (tx: Transaction | null, query: Query) => (tx ? tx.get(query) : query.get());
  /**
   * How many seat holders come before this member in the order seats wait in (newest
   * `seatAssignedAt` first, then uid: the newer seats), or after it (the older seats), counting at
   * most `atMost`: reads no more index entries than that.
   */
  const seatHoldersBeside = async (businessId: string, member: MemberRecord, side: "newer" | "older", atMost: number): Promise<number> => {
    if (atMost <= 0) return 0;
    const at = seatOrderOf(member);
    const [beyond, tied] = await Promise.all([
      members(businessId).where("seatAssignedAt", side === "newer" ? ">" : "<", at).limit(atMost).count().get(),
      members(businessId).where("seatAssignedAt", "==", at).where(FieldPath.documentId(), side === "newer" ? "<" : ">", ref(businessId, member.uid)).limit(atMost).count().get(),
    ]);
    return Math.min(atMost, beyond.data().count + tied.data().count);
  };
  return withDeadlines("Firestore", {
    ref,
    read,
    async get(tx: Transaction | null, businessId: string, uid: string): Promise<MemberRecord | null> {
      return read(tx ? await tx.get(ref(businessId, uid)) : await ref(businessId, uid).get());
    },
    /** Several members of one business, in the order asked (null for a uid that is none). */
    async getMany(tx: Transaction | null, businessId: string, uids: string[]): Promise<(MemberRecord | null)[]> {
      if (uids.length === 0) return [];
      const refs = uids.map((uid) => ref(businessId, uid));
      return (tx ? await tx.getAll(...refs) : await db.getAll(...refs)).map(read);
    },
    /** Every membership of a user, suspended ones too: one query of the user's own. */
    async ofUser(uid: string): Promise<{ businessId: string; member: MemberRecord }[]> {
      return (await memberships(uid).get()).docs.map((doc) => ({ businessId: doc.id, member: read(doc)! }));
    },
    /** How many businesses a user owns, read in the transaction that would make another. */
    async ownedCount(tx: Transaction, uid: string): Promise<number> {
      return (await tx.get(memberships(uid).where("role", "==", "owner").select())).size;
    },
    /** Up to `limit` owners of a business. */
    async owners(tx: Transaction | null, businessId: string, limit: number): Promise<MemberRecord[]> {
      return readAll((await get(tx, members(businessId).where("role", "==", "owner").limit(limit))).docs);
    },
    /** A page of members by when they joined, then uid: `limit + 1` are read, so the caller knows whether more follow. */
    async page(businessId: string, after: MemberPosition | null, limit: number): Promise<MemberRecord[]> {
      let query = members(businessId).orderBy("joinedAt").orderBy(FieldPath.documentId());
      if (after) query = query.startAfter(after.at, after.uid);
      return readAll((await query.limit(limit + 1).get()).docs);
    },
    positionOf: (member: MemberRecord): MemberPosition => ({ at: joinOrderOf(member), uid: member.uid }),
    /** Where a SCIM User sorts in SCIM lists (scimUsers). */
    scimPositionOf: (member: MemberRecord): MemberPosition => ({ at: Timestamp.fromDate(member.scim!.created), uid: member.uid }),
    /** SCIM Users, by when SCIM made them, then id; `where` narrows to one indexed value. */
    scimUsers(businessId: string, where: { field: "scimUserName" | "scimExternalId" | "id" | "groups"; value: string } | null): Query {
      let query: Query = members(businessId);
      if (where?.field === "id") query = query.where(FieldPath.documentId(), "==", ref(businessId, where.value));
      else if (where?.field === "groups") query = query.where("groups", "array-contains", where.value);
      else if (where) query = query.where(where.field, "==", where.value);
      return query.orderBy("scimCreated").orderBy(FieldPath.documentId());
    },
    readPage: async (query: Query) => readAll((await query.get()).docs),
    /** Up to `limit` members of a SCIM group (by uid), outside a transaction: a group's answer, or a page of a removed group's members. */
    async inGroup(businessId: string, groupId: string, limit: number): Promise<MemberRecord[]> {
      return readAll((await members(businessId).where("groups", "array-contains", groupId).orderBy(FieldPath.documentId()).limit(limit).get()).docs);
    },
    /** The uids of a SCIM group's members, without their documents' fields: what a group's whole replacement compares with. */
    async uidsInGroup(businessId: string, groupId: string): Promise<string[]> {
      return (await members(businessId).where("groups", "array-contains", groupId).select().get()).docs.map((doc) => doc.id);
    },
    /** Up to `limit` members who wait for a seat, longest waiting first (then uid). */
    async longestWaiting(tx: Transaction, businessId: string, limit: number): Promise<MemberRecord[]> {
      if (limit <= 0) return [];
      return readAll((await tx.get(members(businessId).orderBy("waitingSince").orderBy(FieldPath.documentId()).limit(limit))).docs);
    },
    /** Up to `limit` seat holders, the most recently seated first (then uid): whose seats a lowered quantity takes back (§17). */
    async latestSeatHolders(tx: Transaction, businessId: string, limit: number): Promise<MemberRecord[]> {
      if (limit <= 0) return [];
      return readAll((await tx.get(members(businessId).where("seatAssignedAt", "!=", null).orderBy("seatAssignedAt", "desc").orderBy(FieldPath.documentId()).limit(limit))).docs);
    },
    /**
     * How many members hold a seat: a count of the holders' documents (one read per 1,000 of them;
     * reading the 256 seat shards would cost 256). The limit itself is kept by the shards (seats/ledger.ts).
     */
    seatsUsed: async (businessId: string) => (await members(businessId).where("seatAssignedAt", ">=", new Timestamp(0, 0)).count().get()).data().count,
    /** How many SCIM Users the business has (SCIM's totalResults of an unfiltered list). */
    /** How many SCIM Users the business has: a count of the members with `scimCreated` (one read per 1,000 of them, nothing kept to write). */
    scimUserCount: async (businessId: string) => (await members(businessId).orderBy("scimCreated").count().get()).data().count,
    /** A member's seat standing, counted from whichever end reads less, as far as these quantities need (access/rules.ts seatCount). */
    async standing(businessId: string, member: MemberRecord, seatsUsed: number, paidQuantities: (number | null)[]): Promise<SeatStanding> {
      const { newer, older } = seatCount(member.seat, seatsUsed, paidQuantities);
      const [holdersBefore, holdersAfter] = await Promise.all([seatHoldersBeside(businessId, member, "newer", newer), seatHoldersBeside(businessId, member, "older", older)]);
      return { seat: member.seat, seatsUsed, holdersBefore, ...(older > 0 ? { holdersAfter: { count: holdersAfter, countedTo: older } } : {}) };
    },
    /**
     * The `limit` oldest seats, oldest first (the seats a paid quantity reaches, §17): a business
     * purchase's holders when it ends (§27). The reverse of the order seats wait in (newest first,
     * then uid), ties included, so that it names exactly the members `drawsOnSubscription` reaches.
     */
    async oldestSeatHolders(tx: Transaction, businessId: string, limit: number): Promise<MemberRecord[]> {
      return readAll((await tx.get(members(businessId).where("seatAssignedAt", "!=", null).orderBy("seatAssignedAt").orderBy(FieldPath.documentId(), "desc").limit(limit))).docs);
    },
    /** Which User holds a SCIM key in this business, read in the transaction that would take it. */
    async scimKeyHolder(tx: Transaction | null, businessId: string, kind: ScimKeyKind, value: string): Promise<string | null> {
      const snapshot = tx ? await tx.get(scimKey(businessId, kind, value)) : await scimKey(businessId, kind, value).get();
      return snapshot.exists ? String(snapshot.get("uid")) : null;
    },
    /**
     * Seat holders of a business whose documents name no seat shard (seated before the shards, so
     * counted in none): a page by uid after `after` of up to `limit` members read, and where the
     * next page starts (null at the end). `migrate seats` counts them.
     */
    async unshardedSeatHolders(businessId: string, after: string | null, limit: number): Promise<{ members: MemberRecord[]; next: string | null }> {
      let query = members(businessId).orderBy(FieldPath.documentId()).limit(limit);
      if (after !== null) query = query.startAfter(after);
      const { docs } = await query.get();
      const unsharded = docs.filter((doc) => doc.get("seatAssignedAt") != null && doc.get("seatShard") === undefined);
      return { members: readAll(unsharded), next: docs.length === limit ? docs.at(-1)!.id : null };
    },
    /** A holder `unshardedSeatHolders` found, read again in the transaction: its seat recorded in its home shard (and the shard named on its document). */
    countSeatIn(tx: Transaction, businessId: string, holder: MemberRecord): void {
      // Written as if the seat were given now: put moves the seat's shard from none to the holder's home shard.
      this.put(tx, businessId, { ...holder, seat: false, seatAssignedAt: null, seatShard: null }, holder);
    },
    /**
     * Writes a member whole (null `after`: removes them), with what is kept beside it: the seat
     * shards move by the seat given or taken (the change found the shard through seats/ledger.ts),
     * and the SCIM keys follow the profile.
     */
    put(tx: Transaction, businessId: string, before: MemberRecord | null, after: MemberRecord | null): void {
      const uid = (after ?? before)!.uid;
      if (after) {
        const document = memberDocumentOf(after);
        tx.set(ref(businessId, uid), document);
        tx.set(membership(uid, businessId), document);
      } else {
        tx.delete(ref(businessId, uid));
        tx.delete(membership(uid, businessId));
      }
      const seatFrom = seatShardOf(before);
      const seatTo = seatShardOf(after);
      if (seatFrom !== seatTo) {
        if (seatFrom !== null) seatShardStore(db).move(tx, businessId, seatFrom, -1);
        if (seatTo !== null) seatShardStore(db).move(tx, businessId, seatTo, 1);
      }
      // Only the keys that change are written: a member moved in a group writes two documents and its events.
      const kept = new Set(scimKeysOf(after).map(([kind, value]) => scimKeyId(kind, value)));
      const held = new Set(scimKeysOf(before).map(([kind, value]) => scimKeyId(kind, value)));
      for (const [kind, value] of scimKeysOf(before)) if (!kept.has(scimKeyId(kind, value))) tx.delete(scimKey(businessId, kind, value));
      for (const [kind, value] of scimKeysOf(after)) if (!held.has(scimKeyId(kind, value))) tx.set(scimKey(businessId, kind, value), { uid, kind });
    },
  });
});
