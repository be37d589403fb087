import { Timestamp, type DocumentSnapshot } from "firebase-admin/firestore";
import { z } from "zod";
import { BUSINESS_ROLES } from "../access/rules";
import { homeSeatShard, SEAT_SHARDS } from "../access/seat-shards";
import { readDocument, timestamp } from "../core/documents";
import { MEMBER_SOURCES, scimProfile, scimProfileFrom, type MemberRecord } from "./business-records";

/**
 * `businesses/{businessId}/members/{uid}` in Firestore's shape (§25), and its copy under
 * `users/{uid}/memberships/{businessId}`: one membership, with the fields the member-store's
 * queries select on. `uid` is repeated in the document; `joinedAt` is the epoch when unknown, so that
 * every member sorts; `seatAssignedAt` is null without a seat (the epoch for a seat held since
 * before seats were recorded); `seatShard` (seat holders) names the seat shard their seat is
 * counted in, `waitingSince` (waiters only) orders those who wait for a seat; the `scim*` fields exist only for SCIM Users: `scimCreated` orders
 * them, `scimUserName` (lowercased) and `scimExternalId` answer filters.
 */

const memberDocument = z.object({
  uid: z.string(),
  role: z.enum(BUSINESS_ROLES),
  joinedAt: timestamp,
  seatAssignedAt: timestamp.nullable(),
  seatShard: z.number().int().min(0).max(SEAT_SHARDS - 1).optional(),
  waitingSince: timestamp.optional(),
  source: z.enum(MEMBER_SOURCES),
  suspended: z.boolean(),
  /** The Firebase Auth user was created for this business by SCIM, which disables it on suspension. */
  managed: z.boolean(),
  scim: scimProfile.optional(),
  groups: z.array(z.string()),
});

const EPOCH = new Timestamp(0, 0);

export function memberFromSnapshot(snapshot: DocumentSnapshot): MemberRecord | null {
  const stored = readDocument(memberDocument, snapshot);
  if (!stored) return null;
  const seatAssignedAt = stored.seatAssignedAt?.toDate() ?? null;
  return {
    uid: stored.uid,
    role: stored.role,
    joinedAt: stored.joinedAt.isEqual(EPOCH) ? null : stored.joinedAt.toDate(),
    seat: seatAssignedAt !== null,
    seatAssignedAt: seatAssignedAt && seatAssignedAt.getTime() === 0 ? null : seatAssignedAt,
    // A seat given before seats were sharded is counted in its member's home shard (migrate seats).
    seatShard: seatAssignedAt === null ? null : (stored.seatShard ?? homeSeatShard(stored.uid)),
    waitingSince: stored.waitingSince?.toDate() ?? null,
    source: stored.source,
    suspended: stored.suspended,
    managed: stored.managed,
    scim: stored.scim ? scimProfileFrom(stored.scim) : null,
    groups: stored.groups,
  };
}

/** The member's whole document: a write replaces all of it. */
export function memberDocumentOf(member: MemberRecord) {
  const { scim } = member;
  return {
    uid: member.uid,
    role: member.role,
    joinedAt: member.joinedAt ? Timestamp.fromDate(member.joinedAt) : EPOCH,
    // A seat held since before seats were recorded keeps being one: it is written as held from the epoch.
    seatAssignedAt: member.seat ? (member.seatAssignedAt ? Timestamp.fromDate(member.seatAssignedAt) : EPOCH) : null,
    ...(member.seat ? { seatShard: member.seatShard ?? homeSeatShard(member.uid) } : {}),
    // Only waiters have the field, so that ordering by it lists them alone, longest waiting first.
    ...(!member.seat && member.waitingSince ? { waitingSince: Timestamp.fromDate(member.waitingSince) } : {}),
    source: member.source,
    suspended: member.suspended,
    managed: member.managed,
    groups: member.groups,
    ...(scim
      ? {
          scim: { ...scim, created: Timestamp.fromDate(scim.created), lastModified: Timestamp.fromDate(scim.lastModified) },
          scimCreated: Timestamp.fromDate(scim.created),
          scimUserName: scim.userName.toLowerCase(),
          ...(scim.externalId !== null ? { scimExternalId: scim.externalId } : {}),
        }
      : {}),
  };
}

/** Where a seat held since before seats were recorded sorts among seat holders: first. */
export const seatOrderOf = (member: MemberRecord) => (member.seatAssignedAt ? Timestamp.fromDate(member.seatAssignedAt) : EPOCH);
export const joinOrderOf = (member: Pick<MemberRecord, "joinedAt">) => (member.joinedAt ? Timestamp.fromDate(member.joinedAt) : EPOCH);
