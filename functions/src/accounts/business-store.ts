import { FieldPath, FieldValue, type DocumentSnapshot, type Firestore, type Transaction } from "firebase-admin/firestore";
import { z } from "zod";
import { BUSINESS_ROLES, type BusinessRole } from "../access/rules";
import { withDeadlines } from "../core/deadline";
import { documentAt, readDocument } from "../core/documents";

/** `businesses/{businessId}`: a business and its members, written by billing and operators. */


const businessDocument = z.object({
  name: z.string(),
  memberIds: z.array(z.string()),
  roles: z.record(z.string(), z.enum(BUSINESS_ROLES)).optional(),
});

export interface BusinessRecord {
  id: string;
  name: string;
  memberIds: string[];
  roles: Record<string, BusinessRole>;
}

export function businessStore(db: Firestore) {
  const collection = db.collection("businesses");
  const read = (snapshot: DocumentSnapshot): BusinessRecord | null => {
    const stored = readDocument(businessDocument, snapshot);
    return stored && { id: snapshot.id, name: stored.name, memberIds: stored.memberIds, roles: stored.roles ?? {} };
  };
  return withDeadlines("Firestore", {
    ref: (businessId: string) => documentAt(collection, businessId),
    read,
    /** The businesses a user is a member of: one query. */
    async forMember(uid: string): Promise<BusinessRecord[]> {
      const snapshot = await collection.where("memberIds", "array-contains", uid).get();
      return snapshot.docs.map((doc) => read(doc)!);
    },
    /** Creates a business with no members; rejects (ALREADY_EXISTS) when the id is taken. */
    async create(businessId: string, name: string): Promise<void> {
      await documentAt(collection, businessId).create({ name, memberIds: [], roles: {} });
    },
    createIn(tx: Transaction, businessId: string, name: string): void {
      tx.create(documentAt(collection, businessId), { name, memberIds: [], roles: {} });
    },
    setMember(tx: Transaction, businessId: string, uid: string, role: BusinessRole): void {
      tx.update(documentAt(collection, businessId), "memberIds", FieldValue.arrayUnion(uid), new FieldPath("roles", uid), role);
    },
    removeMember(tx: Transaction, businessId: string, uid: string): void {
      tx.update(documentAt(collection, businessId), "memberIds", FieldValue.arrayRemove(uid), new FieldPath("roles", uid), FieldValue.delete());
    },
  });
}
