import { Timestamp, type DocumentSnapshot, type Firestore, type WriteBatch } from "firebase-admin/firestore";
import { z } from "zod";
import { withDeadlines } from "../core/deadline";
import { documentAt, readDocument, timestamp, oncePerDatabase } from "../core/documents";
import { PINNABLE_CLAIMS, type TrustedPublisherRule } from "./claims";

/**
 * `modules/{moduleId}/trustedPublishers/{id}`: who may publish a module from CI (contract §15).
 * A token is matched through two collection-group queries, by issuer and subject and by issuer and
 * repository (every trusted publisher names at least one of them), never by a scan.
 */

const trustedPublisherDocument = z.object({
  issuer: z.string(),
  subject: z.string().nullable(),
  claims: z.partialRecord(z.enum(PINNABLE_CLAIMS), z.string()),
  /** The pinned repository again at the top level, null when none: what the repository query matches. */
  repository: z.string().nullable(),
  /** The owner who added it: of the module, or, before its first sign, of the namespace it is in. */
  developerId: z.string(),
  createdAt: timestamp,
});

export interface TrustedPublisherRecord extends TrustedPublisherRule {
  id: string;
  moduleId: string;
  developerId: string;
  createdAt: Date;
}

export const trustedPublisherStore = oncePerDatabase((db: Firestore) => {
  const group = db.collectionGroup("trustedPublishers");
  const collection = (moduleId: string) => documentAt(db.collection("modules"), moduleId).collection("trustedPublishers");
  const read = (snapshot: DocumentSnapshot): TrustedPublisherRecord | null => {
    const stored = readDocument(trustedPublisherDocument, snapshot);
    return (
      stored && {
        id: snapshot.id,
        moduleId: snapshot.ref.parent.parent!.id,
        developerId: stored.developerId,
        issuer: stored.issuer,
        subject: stored.subject,
        claims: stored.claims,
        createdAt: stored.createdAt.toDate(),
      }
    );
  };
  return {
    createIn(writer: WriteBatch, record: TrustedPublisherRecord): void {
      writer.create(documentAt(collection(record.moduleId), record.id), {
        issuer: record.issuer,
        subject: record.subject,
        claims: record.claims,
        repository: record.claims.repository ?? null,
        developerId: record.developerId,
        createdAt: Timestamp.fromDate(record.createdAt),
      });
    },
    deleteIn(writer: WriteBatch, moduleId: string, id: string): void {
      writer.delete(documentAt(collection(moduleId), id));
    },
    ...withDeadlines("Firestore", {
      async get(moduleId: string, id: string): Promise<TrustedPublisherRecord | null> {
        return read(await documentAt(collection(moduleId), id).get());
      },
      /** A module's trusted publishers, oldest first. */
      async list(moduleId: string): Promise<TrustedPublisherRecord[]> {
        const snapshot = await collection(moduleId).get();
        return snapshot.docs.map((doc) => read(doc)!).sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id));
      },
      async count(moduleId: string): Promise<number> {
        return (await collection(moduleId).count().get()).data().count;
      },
      /** Those of these trusted publishers that still exist, in one batched read. */
      async existing(keys: { moduleId: string; id: string }[]): Promise<TrustedPublisherRecord[]> {
        if (keys.length === 0) return [];
        const snapshots = await db.getAll(...keys.map((key) => documentAt(collection(key.moduleId), key.id)));
        return snapshots.map(read).filter((record) => record !== null);
      },
      /** Every trusted publisher, of any module, that could match a token of this issuer, subject and repository. */
      async candidates(issuer: string, subject: string, repository: string | null): Promise<TrustedPublisherRecord[]> {
        const queries = [group.where("issuer", "==", issuer).where("subject", "==", subject).get()];
        if (repository !== null) queries.push(group.where("issuer", "==", issuer).where("repository", "==", repository).get());
        const found = new Map<string, TrustedPublisherRecord>();
        for (const snapshot of await Promise.all(queries)) {
          for (const doc of snapshot.docs) found.set(doc.ref.path, read(doc)!);
        }
        return [...found.values()];
      },
    }),
  };
});
