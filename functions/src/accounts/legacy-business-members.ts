import { homeSeatShard } from "../access/seat-shards";
import { FieldPath, FieldValue, type DocumentSnapshot, type Firestore, type Transaction } from "firebase-admin/firestore";
import { z } from "zod";
import { BUSINESS_ROLES } from "../access/rules";
import { oncePerDatabase, readDocument, timestamp } from "../core/documents";
import { businessStore } from "./business-store";
import { MEMBER_SOURCES, scimProfile, scimProfileFrom, type MemberRecord } from "./business-records";

/**
 * Members as businesses kept them before §25: `memberIds`, `roles` and `members` in the business's
 * own document, and each SCIM group's `memberIds`. Only the migration (`migrate members`) reads
 * this shape, and it removes it once every member has a document of its own.
 */

const legacyMember = z.object({
  joinedAt: timestamp.optional(),
  seatAssignedAt: timestamp.optional(),
  source: z.enum(MEMBER_SOURCES).optional(),
  suspended: z.boolean().optional(),
  managed: z.boolean().optional(),
  scim: scimProfile.optional(),
});

const legacyBusiness = z.object({
  memberIds: z.array(z.string()).optional(),
  roles: z.record(z.string(), z.enum(BUSINESS_ROLES)).optional(),
  members: z.record(z.string(), legacyMember).optional(),
  scimGroups: z.record(z.string(), z.object({ memberIds: z.array(z.string()).optional() })).optional(),
});

/** The members a business document holds in the old shape; null when it holds nothing of that shape (migrated, or never written so), or is missing. */
export function legacyMembersOf(snapshot: DocumentSnapshot): MemberRecord[] | null {
  const stored = readDocument(legacyBusiness, snapshot);
  if (!stored) return null;
  const groups = Object.entries(stored.scimGroups ?? {});
  const hasLegacy = stored.memberIds !== undefined || stored.roles !== undefined || stored.members !== undefined || groups.some(([, group]) => group.memberIds !== undefined);
  if (!hasLegacy) return null;
  const roles = stored.roles ?? {};
  const memberIds = stored.memberIds ?? [];
  const suspended = Object.entries(stored.members ?? {}).flatMap(([uid, entry]) => (entry.suspended ? [uid] : []));
  return [...new Set([...memberIds, ...suspended])].map((uid) => {
    const entry = stored.members?.[uid];
    const role = roles[uid] ?? "member";
    const seatAssignedAt = entry?.seatAssignedAt?.toDate() ?? null;
    return {
      uid,
      role,
      joinedAt: entry?.joinedAt?.toDate() ?? null,
      // A member id without an entry was added by a writer that predates seats: such a member holds a seat.
      seat: entry ? seatAssignedAt !== null : true,
      seatAssignedAt: seatAssignedAt && seatAssignedAt.getTime() === 0 ? null : seatAssignedAt,
      seatShard: (entry ? seatAssignedAt !== null : true) ? homeSeatShard(uid) : null,
      waitingSince: null,
      source: entry?.source ?? (role === "owner" ? "owner" : "invitation"),
      suspended: entry?.suspended === true,
      managed: entry?.managed === true,
      scim: entry?.scim ? scimProfileFrom(entry.scim) : null,
      groups: groups.flatMap(([id, group]) => ((group.memberIds ?? []).includes(uid) ? [id] : [])),
    };
  });
}

/** What the migration does to a business document's old shape (the document's address is the business store's). */
export const legacyBusinessMembers = oncePerDatabase((db: Firestore) => ({
  /** Removes the old shape from a business document, SCIM groups' member lists included. */
  clearIn(tx: Transaction, snapshot: DocumentSnapshot): void {
    const groups = Object.keys((snapshot.get("scimGroups") as Record<string, unknown> | undefined) ?? {});
    const fields: (string | FieldPath | FieldValue)[] = ["memberIds", FieldValue.delete(), "roles", FieldValue.delete(), "members", FieldValue.delete()];
    for (const id of groups) fields.push(new FieldPath("scimGroups", id, "memberIds"), FieldValue.delete());
    const [first, value, ...rest] = fields;
    tx.update(businessStore(db).ref(snapshot.id), first as string, value, ...rest);
  },
}));
