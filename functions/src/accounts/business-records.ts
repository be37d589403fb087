import { z } from "zod";
import type { BusinessRole, SeatHolder } from "../access/rules";
import { timestamp } from "../core/documents";

/**
 * A business as the services see it (§17, §22): its members with their roles and seats, its
 * invitations, verified domains, single sign-on, SCIM groups and settings; and the pure rules over
 * them. `business-document.ts` reads and writes it in Firestore's shape, `business-store.ts` keeps it.
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
  source: MemberSource;
  /** Suspended by SCIM: not in `memberIds`, no seat, nothing of the business reaches them. */
  suspended: boolean;
  /** A Firebase Auth user SCIM created for this business. */
  managed: boolean;
  /** Set when SCIM created or linked the member: only these are SCIM Users. */
  scim: ScimProfile | null;
}

export interface ScimGroupRecord {
  id: string;
  displayName: string;
  externalId: string | null;
  memberIds: string[];
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
  memberIds: string[];
  roles: Record<string, BusinessRole>;
  /** One per member id, in the order of memberIds. */
  members: MemberRecord[];
  invitations: InvitationRecord[];
  invitationsSent: Date[];
  stripeCustomerId: string | null;
  sso: SsoSettings | null;
  domains: DomainRecord[];
  scimSettings: ScimSettings | null;
  scimGroups: ScimGroupRecord[];
}

/**
 * The members holding a seat (§17). A seat held since before seats were recorded counts as the
 * oldest, so it is the last to wait when the paid quantity drops.
 */
export const seatHolders = (business: Pick<BusinessRecord, "members">): SeatHolder[] =>
  business.members.flatMap((member) => (member.seat ? [{ uid: member.uid, assignedAt: member.seatAssignedAt ?? new Date(0) }] : []));

/**
 * About how many bytes the business document takes (its JSON, which counts a little more than
 * Firestore does): a change that would take it past `MAX_BUSINESS_DOCUMENT_BYTES` is refused
 * before Firestore's 1 MiB limit would fail it.
 */
export const approximateDocumentBytes = (business: BusinessRecord) => Buffer.byteLength(JSON.stringify(business));
export const MAX_BUSINESS_DOCUMENT_BYTES = 900 * 1024;

export const memberOf = (business: Pick<BusinessRecord, "members">, uid: string): MemberRecord | undefined => business.members.find((member) => member.uid === uid);

