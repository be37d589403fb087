import { Timestamp, type DocumentReference, type DocumentSnapshot, type Firestore, type WriteBatch } from "firebase-admin/firestore";
import { z } from "zod";
import { withDeadlines } from "../core/deadline";
import { documentAt, readDocument, timestamp, oncePerDatabase } from "../core/documents";

/**
 * `accessTokens/{sha256}`: publishers' access tokens (contract §12), addressed by the SHA-256 of
 * the token (hex), so the token itself is never stored and a presented one is found with one read.
 */

const accessTokenDocument = z.object({
  id: z.string(),
  developerId: z.string(),
  name: z.string(),
  createdAt: timestamp,
  expiresAt: timestamp,
  lastUsedAt: timestamp.optional(),
});

export interface AccessTokenRecord {
  /** The public id, as listed and revoked. */
  id: string;
  developerId: string;
  name: string;
  createdAt: Date;
  expiresAt: Date;
  lastUsedAt: Date | null;
}

export const accessTokenStore = oncePerDatabase((db: Firestore) => {
  const collection = db.collection("accessTokens");
  const read = (snapshot: DocumentSnapshot): AccessTokenRecord | null => {
    const stored = readDocument(accessTokenDocument, snapshot);
    return (
      stored && {
        id: stored.id,
        developerId: stored.developerId,
        name: stored.name,
        createdAt: stored.createdAt.toDate(),
        expiresAt: stored.expiresAt.toDate(),
        lastUsedAt: stored.lastUsedAt?.toDate() ?? null,
      }
    );
  };
  const byId = (developerId: string, id: string) => collection.where("developerId", "==", developerId).where("id", "==", id).limit(1);
  return withDeadlines("Firestore", {
    createIn(writer: WriteBatch, hash: string, token: Omit<AccessTokenRecord, "lastUsedAt">): void {
      writer.create(documentAt(collection, hash), {
        id: token.id,
        developerId: token.developerId,
        name: token.name,
        createdAt: Timestamp.fromDate(token.createdAt),
        expiresAt: Timestamp.fromDate(token.expiresAt),
      });
    },
    async findByHash(hash: string): Promise<AccessTokenRecord | null> {
      return read(await documentAt(collection, hash).get());
    },
    /** A developer's tokens, newest first. */
    async list(developerId: string): Promise<AccessTokenRecord[]> {
      const snapshot = await collection.where("developerId", "==", developerId).get();
      return snapshot.docs.map((doc) => read(doc)!).sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
    },
    async count(developerId: string): Promise<number> {
      return (await collection.where("developerId", "==", developerId).count().get()).data().count;
    },
    /** Where a developer's token of this public id is stored, or null when there is none. */
    async refById(developerId: string, id: string): Promise<DocumentReference | null> {
      const snapshot = await byId(developerId, id).get();
      return snapshot.empty ? null : snapshot.docs[0].ref;
    },
    async touch(hash: string, at: Date): Promise<void> {
      await documentAt(collection, hash).update({ lastUsedAt: Timestamp.fromDate(at) });
    },
  });
});
