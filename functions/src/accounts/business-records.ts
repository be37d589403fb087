import { z } from "zod";
import type { PolicySummary } from "../access/install-policy";
import type { BusinessRole } from "../access/rules";
import { timestamp } from "../core/documents";

/**
 * A business as the services see it (§17, §22, §25): its invitations, verified domains, single
 * sign-on, SCIM groups and settings, in its own document (`business-document.ts` reads and writes
 * it in Firestore's shape, `business-store.ts` keeps it); and its members, one document each
 * (`member-store.ts`), so that nothing of the business grows with its people.
 */

export const MEMBER_SOURCES = ["owner", "invitation", "scim", "sso"] as const;
export type MemberSource = (typeof MEMBER_SOURCES)[number];

export const INVITED_ROLES = ["admin", "member"] as const;
export type InvitedRole = (typeof INVITED_ROLES)[number];

/** What an identity provider said of a member through SCIM (§22); `active` is the member's not being suspended. */
export const scimProfile = z.object({
  userName: z.string(),
  externalId: z.string().nullable(),
  displayName: z.string().nullable(),
  name: z.record(z.string(), z.string()),
  emails: z.array(z.object({ value: z.string(), type: z.string().optional(), primary: z.boolean().optional() })),
  created: timestamp,
  lastModified: timestamp,
});
export type ScimProfile = Omit<z.output<typeof scimProfile>, "created" | "lastModified"> & { created: Date; lastModified: Date };

export const ssoSettings = z.object({ providerId: z.string().nullable(), enforce: z.boolean(), jit: z.boolean() });
export type SsoSettings = z.output<typeof ssoSettings>;

export const scimSettings = z.object({ roleGroups: z.object({ admin: z.array(z.string()).optional() }), seatGroups: z.array(z.string()).nullable() });
export type ScimSettings = z.output<typeof scimSettings>;

export interface MemberRecord {
  uid: string;
  role: BusinessRole;
  /** Unknown for members added before joins were recorded. */
  joinedAt: Date | null;
  seat: boolean;
  /** Since when the member holds a seat; null without a seat, and for a seat held since before seats were recorded. */
  seatAssignedAt: Date | null;
  /** The seat shard the seat is counted in (access/seat-shards.ts); null without a seat. */
  seatShard: number | null;
  /** Since when the member waits for a seat (§25: a freed seat goes to the longest waiting); null: not waiting. */
  waitingSince: Date | null;
  source: MemberSource;
  /** Suspended by SCIM: no seat, nothing of the business reaches them, and they see nothing of it. */
  suspended: boolean;
  /** A Firebase Auth user SCIM created for this business. */
  managed: boolean;
  /** Set when SCIM created or linked the member: only these are SCIM Users. */
  scim: ScimProfile | null;
  /** The ids of the business's SCIM groups the member is in. */
  groups: string[];
}

/** Members in the order they joined (unknown first), then by uid: the order seats are given in. */
export const byJoinOrder = (a: Pick<MemberRecord, "uid" | "joinedAt">, b: Pick<MemberRecord, "uid" | "joinedAt">) =>
  (a.joinedAt?.getTime() ?? 0) - (b.joinedAt?.getTime() ?? 0) || (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0);

/** A SCIM profile as Firestore stores it (its dates as Timestamps), as services see it. */
export const scimProfileFrom = (stored: z.output<typeof scimProfile>): ScimProfile => ({ ...stored, created: stored.created.toDate(), lastModified: stored.lastModified.toDate() });

export interface ScimGroupRecord {
  id: string;
  displayName: string;
  externalId: string | null;
  created: Date;
  lastModified: Date;
}

export interface DomainRecord {
  domain: string;
  txtValue: string;
  createdAt: Date;
  verifiedAt: Date | null;
}

export interface InvitationRecord {
  id: string;
  email: string;
  role: InvitedRole;
  seat: boolean;
  invitedBy: string;
  invitedByName: string | null;
  createdAt: Date;
  expiresAt: Date;
  tokenHash: string;
}

export interface BusinessRecord {
  id: string;
  name: string;
  invitations: InvitationRecord[];
  invitationsSent: Date[];
  stripeCustomerId: string | null;
  /** The business's own publisher id, whose modules are private to its members (§26); null before it claims one. */
  publisherId: string | null;
  /** Its install policy, as far as members are shown it (§26); null: none set. */
  policy: PolicySummary | null;
  sso: SsoSettings | null;
  domains: DomainRecord[];
  scimSettings: ScimSettings | null;
  scimGroups: ScimGroupRecord[];
}
