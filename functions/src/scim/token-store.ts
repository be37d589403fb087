import { Timestamp, type DocumentSnapshot, type Firestore, type Transaction } from "firebase-admin/firestore";
import { z } from "zod";
import { withDeadlines } from "../core/deadline";
import { documentAt, readDocument, timestamp, oncePerDatabase } from "../core/documents";

/**
 * `scimTokens/{sha256}`: a business's SCIM tokens (§22), addressed by the hex SHA-256 of the
 * token, so the token is never stored and a presented one is found with one read. Revoking one
 * deletes it.
 */

const scimTokenDocument = z.object({ id: z.string(), businessId: z.string(), name: z.string(), createdAt: timestamp, lastUsedAt: timestamp.optional() });

export interface ScimTokenRecord {
  id: string;
  businessId: string;
  name: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}

export const scimTokenStore = oncePerDatabase((db: Firestore) => {
  const collection = db.collection("scimTokens");
  const read = (snapshot: DocumentSnapshot): ScimTokenRecord | null => {
    const stored = readDocument(scimTokenDocument, snapshot);
    return stored && { id: stored.id, businessId: stored.businessId, name: stored.name, createdAt: stored.createdAt.toDate(), lastUsedAt: stored.lastUsedAt?.toDate() ?? null };
  };
  const ofBusiness = (businessId: string) => collection.where("businessId", "==", businessId);
  return withDeadlines("Firestore", {
    create(tx: Transaction, hash: string, token: Omit<ScimTokenRecord, "lastUsedAt">): void {
      tx.create(documentAt(collection, hash), { ...token, createdAt: Timestamp.fromDate(token.createdAt) });
    },
    async findByHash(hash: string): Promise<ScimTokenRecord | null> {
      return read(await documentAt(collection, hash).get());
    },
    /** A business's tokens, newest first, with where each is stored. */
    async list(businessId: string, tx?: Transaction): Promise<Array<ScimTokenRecord & { hash: string }>> {
      const snapshot = tx ? await tx.get(ofBusiness(businessId)) : await ofBusiness(businessId).get();
      return snapshot.docs.map((doc) => ({ ...read(doc)!, hash: doc.id })).sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
    },
    delete(tx: Transaction, hash: string): void {
      tx.delete(documentAt(collection, hash));
    },
    async touch(hash: string, at: Date): Promise<void> {
      await documentAt(collection, hash).update({ lastUsedAt: Timestamp.fromDate(at) });
    },
  });
});
