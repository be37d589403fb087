import { Timestamp, type Firestore, type Transaction } from "firebase-admin/firestore";
import { withDeadlines } from "../core/deadline";
import { documentAt, oncePerDatabase } from "../core/documents";

/**
 * `purchases/{purchaseId}/fallbackHolders/{uid}`: the members a business's module subscription
 * entitled when it ended (§27: at most its quantity, oldest seats first), who keep its fallback
 * versions whatever happens to seats afterwards. Written once per purchase, with the purchase's
 * `fallbackHoldersAt`; read one document per member and ended purchase.
 */
export const fallbackHolderStore = oncePerDatabase((db: Firestore) => {
  const holder = (purchaseId: string, uid: string) => documentAt(documentAt(db.collection("purchases"), purchaseId).collection("fallbackHolders"), uid);
  return withDeadlines("Firestore", {
    /** Whether each purchase's holders include this user, in one batched read. */
    async holds(purchaseIds: string[], uid: string): Promise<boolean[]> {
      return (await db.getAll(...purchaseIds.map((purchaseId) => holder(purchaseId, uid)))).map((snapshot) => snapshot.exists);
    },
    recordIn(tx: Transaction, purchase: { id: string; moduleId: string; businessId: string }, uids: string[], at: Date): void {
      for (const uid of uids) tx.set(holder(purchase.id, uid), { moduleId: purchase.moduleId, businessId: purchase.businessId, at: Timestamp.fromDate(at) });
    },
  });
});
