import { FieldValue, type DocumentSnapshot, type Firestore, type Transaction, type WriteBatch } from "firebase-admin/firestore";
import { z } from "zod";
import { withDeadlines } from "../core/deadline";
import { documentAt, readDocument, oncePerDatabase } from "../core/documents";

/** `users/{uid}`: a user's profile data and direct entitlement grants (support and operators write it). */

const userDocument = z.object({
  displayName: z.string().optional(),
  entitlements: z.array(z.string()).optional(),
  stripeCustomerId: z.string().optional(),
});

export interface UserRecord {
  displayName: string | null;
  /** Direct grants, e.g. "pro". */
  entitlements: string[];
  /** The user's own Stripe customer, from their first module purchase (§20): their Billing Portal's. */
  stripeCustomerId: string | null;
}

export const userStore = oncePerDatabase((db: Firestore) => {
  const collection = db.collection("users");
  const read = (snapshot: DocumentSnapshot): UserRecord | null => {
    const stored = readDocument(userDocument, snapshot);
    return stored && { displayName: stored.displayName ?? null, entitlements: stored.entitlements ?? [], stripeCustomerId: stored.stripeCustomerId ?? null };
  };
  return withDeadlines("Firestore", {
    ref: (uid: string) => documentAt(collection, uid),
    read,
    async get(uid: string): Promise<UserRecord | null> {
      return read(await documentAt(collection, uid).get());
    },
    async setDisplayName(uid: string, displayName: string): Promise<void> {
      await documentAt(collection, uid).set({ displayName }, { merge: true });
    },
    setStripeCustomerIn(tx: Transaction, uid: string, customerId: string): void {
      tx.set(documentAt(collection, uid), { stripeCustomerId: customerId }, { merge: true });
    },
    grantIn(writer: WriteBatch, uid: string, key: string): void {
      writer.set(documentAt(collection, uid), { entitlements: FieldValue.arrayUnion(key) }, { merge: true });
    },
    revokeIn(writer: WriteBatch, uid: string, key: string): void {
      writer.update(documentAt(collection, uid), { entitlements: FieldValue.arrayRemove(key) });
    },
  });
});
