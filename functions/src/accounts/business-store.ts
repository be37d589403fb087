import { FieldPath, FieldValue, Timestamp, type Firestore, type Transaction } from "firebase-admin/firestore";
import type { BusinessRole } from "../access/rules";
import { withDeadlines } from "../core/deadline";
import { documentAt, writeReadAsMissing, oncePerDatabase } from "../core/documents";
import { businessFromSnapshot, memberEntryOf } from "./business-document";
import type { BusinessRecord, DomainRecord, InvitationRecord, MemberRecord, MemberSource, ScimGroupRecord, ScimSettings, SsoSettings } from "./business-records";

/**
 * `businesses/{businessId}`: a business, its members with their roles and seats, its pending
 * invitations and its Stripe customer (§17), kept (business-document.ts parses and converts it). Everything that decides a seat lives in this one
 * document, so a transaction on it makes seat counts exact under any concurrency; a business
 * holds a few thousand members before the document nears Firestore's 1 MiB.
 */

export const businessStore = oncePerDatabase((db: Firestore) => {
  const collection = db.collection("businesses");
  const ref = (businessId: string) => documentAt(collection, businessId);
  const read = businessFromSnapshot;
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
