import { FieldPath, FieldValue, Timestamp, type DocumentSnapshot, type Firestore, type Transaction } from "firebase-admin/firestore";
import { z } from "zod";
import { BUSINESS_ROLES, type BusinessRole, type SeatHolder } from "../access/rules";
import { withDeadlines } from "../core/deadline";
import { documentAt, readDocument, timestamp } from "../core/documents";

/**
 * `businesses/{businessId}`: a business, its members with their roles and seats, its pending
 * invitations and its Stripe customer (§17). Everything that decides a seat lives in this one
 * document, so a transaction on it makes seat counts exact under any concurrency; a business
 * holds a few thousand members before the document nears Firestore's 1 MiB.
 */

const memberEntry = z.object({ joinedAt: timestamp.optional(), seatAssignedAt: timestamp.optional() });

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
});

export interface MemberRecord {
  uid: string;
  role: BusinessRole;
  /** Unknown for members added before joins were recorded. */
  joinedAt: Date | null;
  seat: boolean;
  /** Since when the member holds a seat; null without a seat, and for a seat held since before seats were recorded. */
  seatAssignedAt: Date | null;
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
}

/**
 * The members holding a seat (§17). A seat held since before seats were recorded counts as the
 * oldest, so it is the last to wait when the paid quantity drops.
 */
export const seatHolders = (business: Pick<BusinessRecord, "members">): SeatHolder[] =>
  business.members.flatMap((member) => (member.seat ? [{ uid: member.uid, assignedAt: member.seatAssignedAt ?? new Date(0) }] : []));

export const memberOf = (business: Pick<BusinessRecord, "members">, uid: string): MemberRecord | undefined => business.members.find((member) => member.uid === uid);

export function businessStore(db: Firestore) {
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
      members: [...new Set(stored.memberIds)].map((uid) => {
        const entry = stored.members?.[uid];
        const seatAssignedAt = entry?.seatAssignedAt?.toDate() ?? null;
        return { uid, role: roles[uid] ?? "member", joinedAt: entry?.joinedAt?.toDate() ?? null, seat: entry ? seatAssignedAt !== null : true, seatAssignedAt };
      }),
      invitations: Object.entries(stored.invitations ?? {}).map(([id, entry]) => ({
        id,
        ...entry,
        createdAt: entry.createdAt.toDate(),
        expiresAt: entry.expiresAt.toDate(),
      })),
      invitationsSent: (stored.invitationsSent ?? []).map((at) => at.toDate()),
      stripeCustomerId: stored.stripeCustomerId ?? null,
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
    createIn(tx: Transaction, businessId: string, name: string, stripeCustomerId?: string): void {
      tx.create(ref(businessId), { name, memberIds: [], roles: {}, ...(stripeCustomerId ? { stripeCustomerId } : {}) });
    },
    /** A new business with its first owner, who holds a seat. */
    createOwnedIn(tx: Transaction, businessId: string, name: string, owner: string, at: Date): void {
      const joined = Timestamp.fromDate(at);
      tx.create(ref(businessId), { name, memberIds: [owner], roles: { [owner]: "owner" }, members: { [owner]: { joinedAt: joined, seatAssignedAt: joined } } });
    },
    /** Adds a member (or changes a member's role), with a seat from `seatAt` when given. */
    addMember(tx: Transaction, businessId: string, uid: string, role: BusinessRole, joinedAt: Date, seatAt: Date | null): void {
      tx.update(
        ref(businessId),
        "memberIds",
        FieldValue.arrayUnion(uid),
        new FieldPath("roles", uid),
        role,
        memberField(uid),
        { joinedAt: Timestamp.fromDate(joinedAt), ...(seatAt ? { seatAssignedAt: Timestamp.fromDate(seatAt) } : {}) },
      );
    },
    setRole(tx: Transaction, businessId: string, uid: string, role: BusinessRole): void {
      tx.update(ref(businessId), new FieldPath("roles", uid), role);
    },
    /** Gives a member a seat from `at`, or takes it (null), keeping when they joined. */
    setSeat(tx: Transaction, businessId: string, member: MemberRecord, at: Date | null): void {
      tx.update(ref(businessId), memberField(member.uid), {
        ...(member.joinedAt ? { joinedAt: Timestamp.fromDate(member.joinedAt) } : {}),
        ...(at ? { seatAssignedAt: Timestamp.fromDate(at) } : {}),
      });
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
}
