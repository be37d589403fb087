import { Timestamp, type Firestore, type Transaction } from "firebase-admin/firestore";
import { withDeadlines } from "../core/deadline";
import { documentAt, oncePerDatabase } from "../core/documents";

/**
 * `purchases/{purchaseId}/fallbackHolders/{uid}`: the members a business's module subscription
 * entitled when it ended (§27: at most its quantity, oldest seats first), who keep its fallback
 * versions whatever happens to seats afterwards. Written each time the purchase ends, stamped with
 * the purchase's `fallbackHoldersAt` (only the holders of its latest end hold); read one document
 * per member and ended purchase.
 */
export const fallbackHolderStore = oncePerDatabase((db: Firestore) => {
  const holder = (purchaseId: string, uid: string) => documentAt(documentAt(db.collection("purchases"), purchaseId).collection("fallbackHolders"), uid);
  return withDeadlines("Firestore", {
    /**
     * Whether each purchase's holders, as last recorded (`fallbackHoldersAt`), include this user,
     * in one batched read: a holder of an earlier end (before a late payment let it grant again)
     * holds nothing unless recorded again.
     */
    async holds(purchases: { id: string; fallbackHoldersAt: Date | null }[], uid: string): Promise<boolean[]> {
      const snapshots = await db.getAll(...purchases.map((purchase) => holder(purchase.id, uid)));
      return snapshots.map((snapshot, index) => {
        const recorded = purchases[index].fallbackHoldersAt;
        return snapshot.exists && recorded !== null && (snapshot.get("at") as Timestamp).toMillis() === recorded.getTime();
      });
    },
    recordIn(tx: Transaction, purchase: { id: string; moduleId: string; businessId: string }, uids: string[], at: Date): void {
      for (const uid of uids) tx.set(holder(purchase.id, uid), { moduleId: purchase.moduleId, businessId: purchase.businessId, at: Timestamp.fromDate(at) });
    },
  });
});
