import { Timestamp, type DocumentSnapshot, type Firestore, type Transaction, type WriteBatch } from "firebase-admin/firestore";
import { z } from "zod";
import { withDeadlines } from "../core/deadline";
import { documentAt, readDocument, timestamp, oncePerDatabase } from "../core/documents";

/**
 * `authorKeys/{kid}`: publishers' own Ed25519 public keys (contract §15), addressed by their RFC
 * 7638 thumbprint, so a key is registered once across all publishers and found with one read at sign.
 */

const authorKeyDocument = z.object({
  publisherId: z.string(),
  developerId: z.string(),
  name: z.string(),
  x: z.string(),
  createdAt: timestamp,
  revokedAt: timestamp.optional(),
});

export interface AuthorKeyRecord {
  kid: string;
  publisherId: string;
  developerId: string;
  name: string;
  /** The public key: an Ed25519 JWK is `{ kty: "OKP", crv: "Ed25519", x }`. */
  x: string;
  createdAt: Date;
  revokedAt: Date | null;
}

export const authorKeyStore = oncePerDatabase((db: Firestore) => {
  const collection = db.collection("authorKeys");
  const read = (snapshot: DocumentSnapshot): AuthorKeyRecord | null => {
    const stored = readDocument(authorKeyDocument, snapshot);
    return (
      stored && {
        kid: snapshot.id,
        publisherId: stored.publisherId,
        developerId: stored.developerId,
        name: stored.name,
        x: stored.x,
        createdAt: stored.createdAt.toDate(),
        revokedAt: stored.revokedAt?.toDate() ?? null,
      }
    );
  };
  const byCreation = (a: AuthorKeyRecord, b: AuthorKeyRecord) => a.createdAt.getTime() - b.createdAt.getTime() || a.kid.localeCompare(b.kid);
  return {
    /** Fails (ALREADY_EXISTS) when the key is registered already, by anyone. */
    createIn(writer: WriteBatch, key: AuthorKeyRecord): void {
      writer.create(documentAt(collection, key.kid), {
        publisherId: key.publisherId,
        developerId: key.developerId,
        name: key.name,
        x: key.x,
        createdAt: Timestamp.fromDate(key.createdAt),
      });
    },
    /** A key as a transaction sees it, so a revocation racing with a sign decides it. */
    async getIn(tx: Transaction, kid: string): Promise<AuthorKeyRecord | null> {
      return read(await tx.get(documentAt(collection, kid)));
    },
    revokeIn(writer: WriteBatch, kid: string, at: Date): void {
      writer.update(documentAt(collection, kid), { revokedAt: Timestamp.fromDate(at) });
    },
    ...withDeadlines("Firestore", {
      async get(kid: string): Promise<AuthorKeyRecord | null> {
        return read(await documentAt(collection, kid).get());
      },
      /** A publisher's keys, revoked ones included, oldest first. */
      async ofPublisher(publisherId: string): Promise<AuthorKeyRecord[]> {
        return (await collection.where("publisherId", "==", publisherId).get()).docs.map((doc) => read(doc)!).sort(byCreation);
      },
    }),
  };
});
