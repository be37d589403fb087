import { createHash } from "node:crypto";
import { Timestamp, type Firestore, type Transaction } from "firebase-admin/firestore";
import { documentAt, oncePerDatabase } from "../core/documents";

/**
 * `pageViewVisitors/{sha256 of module, day and visitor}`: which visitors viewed a module's page on
 * a UTC day (§28), so that each counts once; `expireAt` (TTL) removes them two days later. Holds
 * no visitor in clear: the key is a hash of the signed-in user, the visitor cookie (`__session`), or the address
 * with the user agent.
 */
const TTL_MS = 2 * 24 * 3600 * 1000;

export const pageViewStore = oncePerDatabase((db: Firestore) => {
  const collection = db.collection("pageViewVisitors");
  const ref = (moduleId: string, day: string, visitor: string) => documentAt(collection, createHash("sha256").update(`${moduleId}\n${day}\n${visitor}`).digest("hex"));
  return {
    /** Whether each visitor key has viewed the module's page that day, read in the transaction that would count them. */
    async seenIn(tx: Transaction, moduleId: string, day: string, visitors: string[]): Promise<boolean[]> {
      return (await tx.getAll(...visitors.map((visitor) => ref(moduleId, day, visitor)))).map((snapshot) => snapshot.exists);
    },
    markIn(tx: Transaction, moduleId: string, day: string, visitors: string[], now: Date): void {
      for (const visitor of visitors) tx.set(ref(moduleId, day, visitor), { moduleId, day, expireAt: Timestamp.fromMillis(now.getTime() + TTL_MS) });
    },
  };
});
