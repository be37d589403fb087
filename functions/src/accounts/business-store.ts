import { FieldPath, FieldValue, Timestamp, type DocumentSnapshot, type Firestore, type Transaction } from "firebase-admin/firestore";
import { z } from "zod";
import { BUSINESS_ROLES, type BusinessRole, type SeatHolder } from "../access/rules";
import { withDeadlines } from "../core/deadline";
import { documentAt, readDocument, timestamp, writeReadAsMissing, oncePerDatabase } from "../core/documents";

/**
 * `businesses/{businessId}`: a business, its members with their roles and seats, its pending
 * invitations and its Stripe customer (§17). Everything that decides a seat lives in this one
 * document, so a transaction on it makes seat counts exact under any concurrency; a business
 * holds a few thousand members before the document nears Firestore's 1 MiB.
 */

export const MEMBER_SOURCES = ["owner", "invitation", "scim", "sso"] as const;
export type MemberSource = (typeof MEMBER_SOURCES)[number];

/** What an identity provider said of a member through SCIM (§22); `active` is the member's not being suspended. */
const scimProfile = z.object({
  userName: z.string(),
  externalId: z.string().nullable(),
  displayName: z.string().nullable(),
  name: z.record(z.string(), z.string()),
  emails: z.array(z.object({ value: z.string(), type: z.string().optional(), primary: z.boolean().optional() })),
  created: timestamp,
  lastModified: timestamp,
});
export type ScimProfile = Omit<z.output<typeof scimProfile>, "created" | "lastModified"> & { created: Date; lastModified: Date };

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

export const ssoSettings = z.object({ providerId: z.string().nullable(), enforce: z.boolean(), jit: z.boolean() });
export type SsoSettings = z.output<typeof ssoSettings>;

export const scimSettings = z.object({ roleGroups: z.object({ admin: z.array(z.string()).optional() }), seatGroups: z.array(z.string()).nullable() });
export type ScimSettings = z.output<typeof scimSettings>;

export const INVITED_ROLES = ["admin", "member"] as const;
export type InvitedRole = (typeof INVITED_ROLES)[number];

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

/** A member's entry in `members`, whole: an update of the entry replaces all of it. */
const memberEntryOf = (member: MemberRecord) => ({
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

export const businessStore = oncePerDatabase((db: Firestore) => {
  const collection = db.collection("businesses");
  const ref = (businessId: string) => documentAt(collection, businessId);
  const read = (snapshot: DocumentSnapshot): BusinessRecord | null => {
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
  };
  const memberField = (uid: string) => new FieldPath("members", uid);
  return withDeadlines("Firestore", {
    ref,
    read,
    /** The businesses a user is a member of: one query. */
    async forMember(uid: string): Promise<BusinessRecord[]> {
      const snapshot = await collection.where("memberIds", "array-contains", uid).get();
      return snapshot.docs.map((doc) => read(doc)!);
    },
    /** How many businesses a user owns: one query on the automatic index of `roles.<uid>`. */
    async ownedBy(tx: Transaction, uid: string): Promise<number> {
      const snapshot = await tx.get(collection.where(new FieldPath("roles", uid), "==", "owner").select());
      return snapshot.size;
    },
    /** Creates a business with no members; rejects (ALREADY_EXISTS) when the id is taken. */
    async create(businessId: string, name: string): Promise<void> {
      await ref(businessId).create({ name, memberIds: [], roles: {} });
    },
    /** A business the transaction has read as missing. */
    createIn(tx: Transaction, businessId: string, name: string, stripeCustomerId?: string): void {
      writeReadAsMissing(tx, ref(businessId), { name, memberIds: [], roles: {}, ...(stripeCustomerId ? { stripeCustomerId } : {}) });
    },
    /** A new business with its first owner, who holds a seat. */
    createOwnedIn(tx: Transaction, businessId: string, name: string, owner: string, at: Date): void {
      const joined = Timestamp.fromDate(at);
      tx.create(ref(businessId), { name, memberIds: [owner], roles: { [owner]: "owner" }, members: { [owner]: { joinedAt: joined, seatAssignedAt: joined, source: "owner" } } });
    },
    /** Adds a member (or changes a member's role), with a seat from `seatAt` when given. */
    addMember(tx: Transaction, businessId: string, uid: string, role: BusinessRole, joinedAt: Date, seatAt: Date | null, source?: MemberSource): void {
      tx.update(
        ref(businessId),
        "memberIds",
        FieldValue.arrayUnion(uid),
        new FieldPath("roles", uid),
        role,
        memberField(uid),
        { joinedAt: Timestamp.fromDate(joinedAt), ...(seatAt ? { seatAssignedAt: Timestamp.fromDate(seatAt) } : {}), ...(source ? { source } : {}) },
      );
    },
    /**
     * Writes a member whole (SCIM and SSO): role, seat, source, suspension and SCIM profile. A
     * suspended member leaves `memberIds`, so every read that finds members (access, the business's
     * routes, `GET /users/me`) passes them by.
     */
    putMember(tx: Transaction, businessId: string, member: MemberRecord): void {
      tx.update(
        ref(businessId),
        "memberIds",
        member.suspended ? FieldValue.arrayRemove(member.uid) : FieldValue.arrayUnion(member.uid),
        new FieldPath("roles", member.uid),
        member.role,
        memberField(member.uid),
        memberEntryOf(member),
      );
    },
    putScimGroup(tx: Transaction, businessId: string, group: ScimGroupRecord): void {
      const { id, created, lastModified, ...rest } = group;
      tx.update(ref(businessId), new FieldPath("scimGroups", id), { ...rest, created: Timestamp.fromDate(created), lastModified: Timestamp.fromDate(lastModified) });
    },
    deleteScimGroup(tx: Transaction, businessId: string, groupId: string): void {
      tx.update(ref(businessId), new FieldPath("scimGroups", groupId), FieldValue.delete());
    },
    setScimSettings(tx: Transaction, businessId: string, settings: ScimSettings): void {
      tx.update(ref(businessId), "scimSettings", settings);
    },
    setSso(tx: Transaction, businessId: string, settings: SsoSettings): void {
      tx.update(ref(businessId), "sso", settings);
    },
    putDomain(tx: Transaction, businessId: string, domain: DomainRecord): void {
      tx.update(ref(businessId), new FieldPath("domains", domain.domain), {
        txtValue: domain.txtValue,
        createdAt: Timestamp.fromDate(domain.createdAt),
        verifiedAt: domain.verifiedAt ? Timestamp.fromDate(domain.verifiedAt) : null,
      });
    },
    deleteDomain(tx: Transaction, businessId: string, domain: string): void {
      tx.update(ref(businessId), new FieldPath("domains", domain), FieldValue.delete());
    },
    setRole(tx: Transaction, businessId: string, uid: string, role: BusinessRole): void {
      tx.update(ref(businessId), new FieldPath("roles", uid), role);
    },
    /** Gives a member a seat from `at`, or takes it (null), keeping the rest of their entry. */
    setSeat(tx: Transaction, businessId: string, member: MemberRecord, at: Date | null): void {
      tx.update(ref(businessId), memberField(member.uid), memberEntryOf({ ...member, seat: at !== null, seatAssignedAt: at }));
    },
    removeMember(tx: Transaction, businessId: string, uid: string): void {
      tx.update(ref(businessId), "memberIds", FieldValue.arrayRemove(uid), new FieldPath("roles", uid), FieldValue.delete(), memberField(uid), FieldValue.delete());
    },
    /** Adds a pending invitation, recording its sending in the last day's list (`sentSince`: the entries still inside it). */
    putInvitation(tx: Transaction, businessId: string, invitation: InvitationRecord, sentRecently: Date[]): void {
      const { id, createdAt, expiresAt, ...rest } = invitation;
      tx.update(
        ref(businessId),
        new FieldPath("invitations", id),
        { ...rest, createdAt: Timestamp.fromDate(createdAt), expiresAt: Timestamp.fromDate(expiresAt) },
        "invitationsSent",
        [...sentRecently, createdAt].map((at) => Timestamp.fromDate(at)),
      );
    },
    deleteInvitations(tx: Transaction, businessId: string, invitationIds: string[]): void {
      if (invitationIds.length === 0) return;
      const [first, ...rest] = invitationIds.map((id) => new FieldPath("invitations", id));
      tx.update(ref(businessId), first, FieldValue.delete(), ...rest.flatMap((field) => [field, FieldValue.delete()]));
    },
    setStripeCustomer(tx: Transaction, businessId: string, customerId: string): void {
      tx.update(ref(businessId), "stripeCustomerId", customerId);
    },
  });
});
