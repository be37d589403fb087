import { FieldPath, FieldValue, Timestamp, type Firestore, type Transaction } from "firebase-admin/firestore";
import type { PolicySummary } from "../access/install-policy";
import { withDeadlines } from "../core/deadline";
import { documentAt, writeReadAsMissing, oncePerDatabase } from "../core/documents";
import { businessFromSnapshot } from "./business-document";
import type { BusinessRecord, DomainRecord, InvitationRecord, ScimGroupRecord, ScimSettings, SsoSettings } from "./business-records";

/**
 * `businesses/{businessId}`: a business, its pending invitations, domains, single sign-on, SCIM
 * groups and settings and its Stripe customer (§17, §22), kept (business-document.ts parses and
 * converts it). Its members are documents of their own (member-store.ts, §25): nothing here grows
 * with them.
 */

export const businessStore = oncePerDatabase((db: Firestore) => {
  const collection = db.collection("businesses");
  const ref = (businessId: string) => documentAt(collection, businessId);
  const read = businessFromSnapshot;
  return withDeadlines("Firestore", {
    ref,
    read,
    /** Business ids in order, a page at a time (the operators' sweeps over every business). */
    async idsAfter(after: string | null, limit: number): Promise<string[]> {
      let query = collection.orderBy(FieldPath.documentId()).select();
      if (after !== null) query = query.startAfter(after);
      return (await query.limit(limit).get()).docs.map((doc) => doc.id);
    },
    /** Several businesses in one read, in the order asked (null for an id that is none). */
    async getMany(businessIds: string[]): Promise<(BusinessRecord | null)[]> {
      return businessIds.length > 0 ? (await db.getAll(...businessIds.map(ref))).map(read) : [];
    },
    /** Creates a business with no members; rejects (ALREADY_EXISTS) when the id is taken. */
    async create(businessId: string, name: string): Promise<void> {
      await ref(businessId).create({ name });
    },
    /** A business the transaction has read as missing (its members are written beside it). */
    createIn(tx: Transaction, businessId: string, name: string, stripeCustomerId?: string): void {
      writeReadAsMissing(tx, ref(businessId), { name, ...(stripeCustomerId ? { stripeCustomerId } : {}) });
    },
    /** A business under a new random id, whose first owner the caller writes beside it. */
    createFreshIn(tx: Transaction, businessId: string, name: string): void {
      tx.create(ref(businessId), { name });
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
    setPolicySummary(tx: Transaction, businessId: string, summary: PolicySummary): void {
      tx.update(ref(businessId), "policy", { version: summary.version, mode: summary.mode, required: summary.required, message: summary.message });
    },
    setPublisher(tx: Transaction, businessId: string, publisherId: string): void {
      tx.update(ref(businessId), "publisherId", publisherId);
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
