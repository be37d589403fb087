import { Timestamp, type Firestore, type WriteBatch } from "firebase-admin/firestore";
import { withDeadlines } from "../core/deadline";
import { documentAt, oncePerDatabase } from "../core/documents";

/**
 * `trustedFlaggers/{email}`: the trusted flaggers (contract §30, Art. 22) an operator named. A
 * notice counts as a trusted flagger's only when sent with the ID token of an account whose
 * verified email is one of these: an email typed into an anonymous notice names nobody.
 */
export const flaggerStore = oncePerDatabase((db: Firestore) => {
  const collection = db.collection("trustedFlaggers");
  return {
    ...withDeadlines("Firestore", {
      async isTrusted(email: string): Promise<boolean> {
        return (await documentAt(collection, email.toLowerCase()).get()).exists;
      },
      async list(): Promise<{ email: string; addedBy: string; addedAt: Date }[]> {
        return (await collection.get()).docs.map((doc) => ({ email: doc.id, addedBy: String(doc.get("addedBy")), addedAt: (doc.get("addedAt") as Timestamp).toDate() }));
      },
    }),
    /** Names (or no longer names) a trusted flagger, in the batch of its audit entry. */
    setIn(batch: WriteBatch, email: string, trusted: boolean, by: string, at: Date): void {
      const ref = documentAt(collection, email.toLowerCase());
      if (trusted) batch.set(ref, { addedBy: by, addedAt: Timestamp.fromDate(at) });
      else batch.delete(ref);
    },
  };
});
