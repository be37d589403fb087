import { Timestamp, type DocumentSnapshot, type Firestore, type Transaction, type WriteBatch } from "firebase-admin/firestore";
import { z } from "zod";
import { ACTOR_KINDS, type Actor } from "../core/audit-log";
import { withDeadlines } from "../core/deadline";
import { documentAt, readDocument, timestamp, oncePerDatabase } from "../core/documents";

/**
 * `blocklist/{sha256}`: SHA-256s (hex) of files and packages that operators refuse (contract §14),
 * addressed by the hash so that a package's entries are looked up in one batched read.
 */

const blocklistDocument = z.object({
  reason: z.string(),
  addedAt: timestamp,
  addedBy: z.object({ kind: z.enum(ACTOR_KINDS), id: z.string() }),
});

export interface BlocklistRecord {
  sha256: string;
  reason: string;
  addedAt: Date;
  addedBy: { kind: Actor["kind"]; id: string };
}

/** Firestore's getAll takes this many documents per call comfortably. */
const READ_CHUNK = 300;

export const blocklistStore = oncePerDatabase((db: Firestore) => {
  const collection = db.collection("blocklist");
  const read = (snapshot: DocumentSnapshot): BlocklistRecord | null => {
    const stored = readDocument(blocklistDocument, snapshot);
    return stored && { sha256: snapshot.id, reason: stored.reason, addedAt: stored.addedAt.toDate(), addedBy: stored.addedBy };
  };
  return {
    set(writer: WriteBatch | Transaction, record: BlocklistRecord): void {
      (writer as WriteBatch).set(documentAt(collection, record.sha256), {
        reason: record.reason,
        addedAt: Timestamp.fromDate(record.addedAt),
        addedBy: record.addedBy,
      });
    },
    delete(writer: WriteBatch | Transaction, sha256: string): void {
      (writer as WriteBatch).delete(documentAt(collection, sha256));
    },
    ...withDeadlines("Firestore", {
      async get(sha256: string): Promise<BlocklistRecord | null> {
        return read(await documentAt(collection, sha256).get());
      },
      /** The entries among these hashes, in batched reads. */
      async find(hashes: string[]): Promise<BlocklistRecord[]> {
        const unique = [...new Set(hashes)];
        const found: BlocklistRecord[] = [];
        for (let start = 0; start < unique.length; start += READ_CHUNK) {
          const snapshots = await db.getAll(...unique.slice(start, start + READ_CHUNK).map((hash) => documentAt(collection, hash)));
          for (const snapshot of snapshots) {
            const record = read(snapshot);
            if (record) found.push(record);
          }
        }
        return found;
      },
      async list(): Promise<BlocklistRecord[]> {
        return (await collection.orderBy("addedAt", "desc").get()).docs.map((doc) => read(doc)!);
      },
    }),
  };
});
