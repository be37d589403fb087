import { FieldValue, Timestamp, type Firestore } from "firebase-admin/firestore";
import { withDeadlines } from "../core/deadline";
import { documentAt, oncePerDatabase } from "../core/documents";

/**
 * `loginAttempts/{accountHash}-{window}`: failed developer logins of one account in one window
 * (login-limit.ts). Increments are atomic and need no transaction, so a burst of failures from
 * many places never contends; `expireAt` lets a Firestore TTL policy delete old windows.
 */
export const loginAttemptStore = oncePerDatabase((db: Firestore) => {
  const collection = db.collection("loginAttempts");
  return withDeadlines("Firestore", {
    async failures(key: string): Promise<number> {
      const snapshot = await documentAt(collection, key).get();
      return snapshot.exists ? Number(snapshot.get("failures") ?? 0) : 0;
    },
    async recordFailure(key: string, expireAt: Date): Promise<void> {
      await documentAt(collection, key).set({ failures: FieldValue.increment(1), expireAt: Timestamp.fromDate(expireAt) }, { merge: true });
    },
    async clear(key: string): Promise<void> {
      await documentAt(collection, key).delete();
    },
  });
});
