import { Timestamp, type DocumentSnapshot } from "firebase-admin/firestore";
import { z } from "zod";
import { BUSINESS_ROLES } from "../access/rules";
import { readDocument, timestamp } from "../core/documents";
import { INVITED_ROLES, MEMBER_SOURCES, scimProfile, scimSettings, ssoSettings, type BusinessRecord, type MemberRecord } from "./business-records";

/**
 * `businesses/{businessId}` in Firestore's shape: the document's schema, and the conversions
 * between it and a BusinessRecord (business-records.ts).
 */

const memberEntry = z.object({
  joinedAt: timestamp.optional(),
  seatAssignedAt: timestamp.optional(),
  source: z.enum(MEMBER_SOURCES).optional(),
  /** Suspended by SCIM (`active: false`): kept here, but out of `memberIds`, so nothing reaches them. */
  suspended: z.boolean().optional(),
  /** The Firebase Auth user was created for this business by SCIM, which disables it on suspension. */
  managed: z.boolean().optional(),
  scim: scimProfile.optional(),
});

const scimGroupEntry = z.object({
  displayName: z.string(),
  externalId: z.string().nullable(),
  memberIds: z.array(z.string()),
  created: timestamp,
  lastModified: timestamp,
});

const domainEntry = z.object({ txtValue: z.string(), createdAt: timestamp, verifiedAt: timestamp.nullable() });

const invitationEntry = z.object({
  email: z.string(),
  role: z.enum(INVITED_ROLES),
  seat: z.boolean(),
  invitedBy: z.string(),
  invitedByName: z.string().nullable(),
  createdAt: timestamp,
  expiresAt: timestamp,
  /** The hex SHA-256 of the token: the token itself is never stored. */
  tokenHash: z.string(),
});

const businessDocument = z.object({
  name: z.string(),
  memberIds: z.array(z.string()),
  roles: z.record(z.string(), z.enum(BUSINESS_ROLES)).optional(),
  /** Per member: when they joined, and since when they hold a seat (absent: no seat). */
  members: z.record(z.string(), memberEntry).optional(),
  invitations: z.record(z.string(), invitationEntry).optional(),
  /** When each invitation of the last 24 hours was sent (the 50-a-day limit). */
  invitationsSent: z.array(timestamp).optional(),
  stripeCustomerId: z.string().optional(),
  sso: ssoSettings.optional(),
  domains: z.record(z.string(), domainEntry).optional(),
  scimSettings: scimSettings.optional(),
  scimGroups: z.record(z.string(), scimGroupEntry).optional(),
});

/** A member's entry in `members`, whole: an update of the entry replaces all of it. */
export const memberEntryOf = (member: MemberRecord) => ({
  ...(member.joinedAt ? { joinedAt: Timestamp.fromDate(member.joinedAt) } : {}),
  // A seat held since before seats were recorded keeps being one: it is written as held from the epoch.
  ...(member.seat ? { seatAssignedAt: Timestamp.fromDate(member.seatAssignedAt ?? new Date(0)) } : {}),
  source: member.source,
  ...(member.suspended ? { suspended: true } : {}),
  ...(member.managed ? { managed: true } : {}),
  ...(member.scim ? { scim: { ...member.scim, created: Timestamp.fromDate(member.scim.created), lastModified: Timestamp.fromDate(member.scim.lastModified) } } : {}),
});

/** Members suspended by SCIM: entries without a place in `memberIds`. */
const suspendedIds = (members: Record<string, z.output<typeof memberEntry>> | undefined) =>
  Object.entries(members ?? {}).flatMap(([uid, entry]) => (entry.suspended ? [uid] : []));

/** The business a snapshot holds, or null when there is none. */
export function businessFromSnapshot(snapshot: DocumentSnapshot): BusinessRecord | null {

  const stored = readDocument(businessDocument, snapshot);
  if (!stored) return null;
  const roles = stored.roles ?? {};
  return {
    id: snapshot.id,
    name: stored.name,
    memberIds: stored.memberIds,
    roles,
    // A member id without an entry in `members` was added by a writer that predates seats (an
    // operator tool, the console, a support script): such a member holds a seat, as every
    // member drew on the subscription before seats were counted.
    members: [...new Set([...stored.memberIds, ...suspendedIds(stored.members)])].map((uid) => {
      const entry = stored.members?.[uid];
      const seatAssignedAt = entry?.seatAssignedAt?.toDate() ?? null;
      const role = roles[uid] ?? "member";
      return {
        uid,
        role,
        joinedAt: entry?.joinedAt?.toDate() ?? null,
        seat: entry ? seatAssignedAt !== null : true,
        seatAssignedAt,
        source: entry?.source ?? (role === "owner" ? "owner" : "invitation"),
        suspended: entry?.suspended === true,
        managed: entry?.managed === true,
        scim: entry?.scim ? { ...entry.scim, created: entry.scim.created.toDate(), lastModified: entry.scim.lastModified.toDate() } : null,
      };
    }),
    invitations: Object.entries(stored.invitations ?? {}).map(([id, entry]) => ({
      id,
      ...entry,
      createdAt: entry.createdAt.toDate(),
      expiresAt: entry.expiresAt.toDate(),
    })),
    invitationsSent: (stored.invitationsSent ?? []).map((at) => at.toDate()),
    stripeCustomerId: stored.stripeCustomerId ?? null,
    sso: stored.sso ?? null,
    domains: Object.entries(stored.domains ?? {}).map(([domain, entry]) => ({
      domain,
      txtValue: entry.txtValue,
      createdAt: entry.createdAt.toDate(),
      verifiedAt: entry.verifiedAt?.toDate() ?? null,
    })),
    scimSettings: stored.scimSettings ?? null,
    scimGroups: Object.entries(stored.scimGroups ?? {}).map(([id, entry]) => ({ id, ...entry, created: entry.created.toDate(), lastModified: entry.lastModified.toDate() })),
  };
}
