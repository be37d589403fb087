import { Timestamp, type DocumentSnapshot, type Firestore, type Transaction } from "firebase-admin/firestore";
import { z } from "zod";
import type { DeveloperAccount } from "../core/auth";
import { withDeadlines } from "../core/deadline";
import { documentAt, readDocument, timestamp } from "../core/documents";

/**
 * `developers/{uid}`: developer accounts; and `publishers/{publisherId}` (`{ developerId }`), the
 * claim that gives each publisher id one owner. The service writes both, in one transaction.
 */

const developerDocument = z.object({
  email: z.string().nullable(),
  displayName: z.string(),
  publisherId: z.string(),
  createdAt: timestamp,
});

export function developerStore(db: Firestore) {
  const developers = db.collection("developers");
  const publishers = db.collection("publishers");
  const read = (snapshot: DocumentSnapshot): DeveloperAccount | null => {
    const stored = readDocument(developerDocument, snapshot);
    return stored && { id: snapshot.id, ...stored, createdAt: stored.createdAt.toDate() };
  };
  return withDeadlines("Firestore", {
    async get(uid: string): Promise<DeveloperAccount | null> {
      return read(await documentAt(developers, uid).get());
    },
    async publisherTaken(publisherId: string): Promise<boolean> {
      return (await documentAt(publishers, publisherId).get()).exists;
    },
    /** In a transaction: whether the user is a developer already, and whether the publisher id is claimed. */
    async claims(tx: Transaction, uid: string, publisherId: string): Promise<{ registered: boolean; publisherTaken: boolean }> {
      const [developer, publisher] = await tx.getAll(documentAt(developers, uid), documentAt(publishers, publisherId));
      return { registered: developer.exists, publisherTaken: publisher.exists };
    },
    create(tx: Transaction, account: DeveloperAccount): void {
      tx.create(documentAt(publishers, account.publisherId), { developerId: account.id });
      tx.create(documentAt(developers, account.id), {
        email: account.email,
        displayName: account.displayName,
        publisherId: account.publisherId,
        createdAt: Timestamp.fromDate(account.createdAt),
      });
    },
  });
}
