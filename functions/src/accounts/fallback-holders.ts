import type { Firestore, Transaction } from "firebase-admin/firestore";
import { purchaseGrants } from "../access/rules";
import { withinDeadline } from "../core/deadline";
import { fallbackHolderStore } from "./fallback-holder-store";
import { memberStore } from "./member-store";
import { purchaseStore, type PurchaseRecord } from "./purchase-store";

/**
 * Who keeps a business purchase's fallback (§27): the members it entitled when it ended, at most
 * its quantity, oldest seats first (suspended members drew nothing, so they keep nothing). They
 * are recorded by the webhook event that ends the purchase, or, when it ends by time alone (a
 * past-due subscription's grace running out), by the first request that finds it ended; should it
 * grant again, they are recorded afresh at its next end.
 */

/** Whether a purchase has ended with a fallback whose holders are not recorded yet. */
export const holdersDue = (purchase: PurchaseRecord, now: Date) =>
  purchase.owner.kind === "business" && purchase.fallback === "perpetual" && purchase.fallbackUntil !== null && purchase.fallbackHoldersAt === null && !purchaseGrants(purchase, now);

/** Reads, in the transaction that writes the purchase, the members who keep its fallback. */
export async function fallbackHoldersIn(tx: Transaction, db: Firestore, purchase: Pick<PurchaseRecord, "owner" | "quantity">): Promise<string[]> {
  const holders = await memberStore(db).oldestSeatHolders(tx, purchase.owner.id, purchase.quantity);
  return holders.filter((member) => !member.suspended).map((member) => member.uid);
}

/**
 * Records the holders of an ended business purchase whose holders are due, once, whoever gets
 * there first; answers when the holders it has were recorded (null: none are).
 */
export async function recordDueHolders(db: Firestore, purchaseId: string, now: Date): Promise<Date | null> {
  const purchases = purchaseStore(db);
  return withinDeadline(
    "Firestore (fallback holders)",
    db.runTransaction(async (tx) => {
      const purchase = purchases.read(await tx.get(purchases.ref(purchaseId)));
      if (!purchase || !holdersDue(purchase, now)) return purchase?.fallbackHoldersAt ?? null;
      const uids = await fallbackHoldersIn(tx, db, purchase);
      fallbackHolderStore(db).recordIn(tx, { id: purchase.id, moduleId: purchase.moduleId, businessId: purchase.owner.id }, uids, now);
      purchases.setIn(tx, { ...purchase, fallbackHoldersAt: now });
      return now;
    }),
  );
}

/**
 * When a purchase's fallback holders were recorded, as its next state keeps it: cleared while the
 * purchase grants again (a late payment), so that its next end records them afresh (§27).
 */
export const holdersRecordedAt = (purchase: PurchaseRecord, now: Date): Date | null => (purchaseGrants(purchase, now) ? null : purchase.fallbackHoldersAt);
