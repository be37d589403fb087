import { Timestamp, type DocumentSnapshot, type Firestore, type WriteBatch } from "firebase-admin/firestore";
import { z } from "zod";
import { withDeadlines } from "../core/deadline";
import { documentAt, readDocument, timestamp, oncePerDatabase } from "../core/documents";
import { provenanceSchema, type Provenance } from "../core/provenance";

/**
 * `publishTokens/{sha256}`: the short-lived `mpo_` tokens trusted publishing hands out (contract
 * §15), addressed by the SHA-256 of the token (hex) like access tokens, so the token itself is
 * never stored. `expireAt` lets Firestore's TTL policy remove them once expired.
 */

const publishTokenDocument = z.object({
  id: z.string(),
  developerId: z.string(),
  moduleIds: z.array(z.string()),
  trustedPublishers: z.array(z.object({ moduleId: z.string(), id: z.string() })),
  provenance: provenanceSchema,
  createdAt: timestamp,
  expireAt: timestamp,
});

export interface PublishTokenRecord {
  /** The public id, as the audit log names the token. */
  id: string;
  developerId: string;
  moduleIds: string[];
  /** The trusted publishers that granted it: it acts only on modules whose granting publisher still exists. */
  trustedPublishers: { moduleId: string; id: string }[];
  provenance: Provenance;
  createdAt: Date;
  expiresAt: Date;
}

export const publishTokenStore = oncePerDatabase((db: Firestore) => {
  const collection = db.collection("publishTokens");
  const read = (snapshot: DocumentSnapshot): PublishTokenRecord | null => {
    const stored = readDocument(publishTokenDocument, snapshot);
    return (
      stored && {
        id: stored.id,
        developerId: stored.developerId,
        moduleIds: stored.moduleIds,
        trustedPublishers: stored.trustedPublishers,
        provenance: stored.provenance,
        createdAt: stored.createdAt.toDate(),
        expiresAt: stored.expireAt.toDate(),
      }
    );
  };
  return {
    createIn(writer: WriteBatch, hash: string, token: PublishTokenRecord): void {
      writer.create(documentAt(collection, hash), {
        id: token.id,
        developerId: token.developerId,
        moduleIds: token.moduleIds,
        trustedPublishers: token.trustedPublishers,
        provenance: JSON.parse(JSON.stringify(token.provenance)) as Provenance,
        createdAt: Timestamp.fromDate(token.createdAt),
        expireAt: Timestamp.fromDate(token.expiresAt),
      });
    },
    ...withDeadlines("Firestore", {
      async findByHash(hash: string): Promise<PublishTokenRecord | null> {
        return read(await documentAt(collection, hash).get());
      },
    }),
  };
});
