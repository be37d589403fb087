import type { Transaction } from "firebase-admin/firestore";
import { businessStore } from "../accounts/business-store";
import { purchaseStore, type PurchaseOwner, type PurchaseRecord } from "../accounts/purchase-store";
import { auditLog, type Actor } from "../core/audit-log";
import { outboundEvent } from "../core/event-types";
import type { Deps } from "../deps";
import { moduleStore } from "../marketplace/module-store";
import { ledgerStore, type SaleLine, type SaleWithLines } from "./ledger-store";
import { pendingCountStore } from "../metrics/pending-count-store";
import { earnedFallback, feeGivenBack, purchaseFacts, unannouncedRefund } from "./rules";
import { refundCounts } from "./sale-metrics";

/**
 * What the handlers of §20's events share: reading a purchase with everything its status depends
 * on, writing its refund and dispute facts, and announcing refunds. Each runs inside the event's
 * transaction, so what it writes commits with the event's id, its audit entry and its outbound
 * events, or not at all.
 */

/** Reads what a purchase's status depends on: the module, the purchase, and the ledger lines of all its payments. */
export async function readPurchase(tx: Transaction, deps: Deps, purchaseId: string, moduleId: string, owner?: PurchaseOwner) {
  const modules = moduleStore(deps.db);
  const purchases = purchaseStore(deps.db);
  const businesses = businessStore(deps.db);
  // A business buyer's document comes in the same read: its Stripe customer is remembered.
  const [moduleSnapshot, purchaseSnapshot, businessSnapshot] = await tx.getAll(
    modules.moduleRef(moduleId),
    purchases.ref(purchaseId),
    ...(owner?.kind === "business" ? [businesses.ref(owner.id)] : []),
  );
  const lines = await ledgerStore(deps.db).linesOfPurchaseIn(tx, purchaseId);
  return { module: modules.readModule(moduleSnapshot), purchase: purchases.read(purchaseSnapshot), business: businessSnapshot ? businesses.read(businessSnapshot) : null, lines };
}

/**
 * Writes a purchase's refund and dispute facts (and so its status) and its fallback date (§27)
 * when they changed, with an audit entry for a dispute's change and for a fallback earned.
 */
export function writeFacts(tx: Transaction, deps: Deps, purchase: PurchaseRecord, lines: SaleWithLines[], now: Date, actor: Actor, also: Partial<Pick<PurchaseRecord, "trialConverted">> = {}): void {
  const facts = purchaseFacts(lines);
  const fallbackUntil = earnedFallback(purchase, lines);
  const fallbackMoved = fallbackUntil?.getTime() !== purchase.fallbackUntil?.getTime();
  const alsoChanged = also.trialConverted !== undefined && also.trialConverted !== purchase.trialConverted;
  if (facts.refunded === purchase.refunded && facts.dispute === purchase.dispute && !fallbackMoved && !alsoChanged) return;
  purchaseStore(deps.db).setIn(tx, { ...purchase, ...facts, ...also, fallbackUntil, updatedAt: now });
  if (facts.dispute !== purchase.dispute) {
    auditLog(deps.db).record(tx, actor, { action: "module.purchase.disputed", target: purchase.id, details: { moduleId: purchase.moduleId, dispute: facts.dispute } }, now);
  }
  if (fallbackMoved) auditFallback(tx, deps, purchase, fallbackUntil!, now, actor);
}

/** The audit entry of a fallback date earned or moved forward (§27). */
export function auditFallback(tx: Transaction, deps: Deps, purchase: Pick<PurchaseRecord, "id" | "moduleId" | "owner" | "fallbackUntil">, fallbackUntil: Date, now: Date, actor: Actor): void {
  auditLog(deps.db).record(tx, actor, { action: "module.purchase.fallback", target: purchase.id, details: { moduleId: purchase.moduleId, owner: purchase.owner, fallbackUntil: fallbackUntil.toISOString(), before: purchase.fallbackUntil?.toISOString() ?? null } }, now);
}

/**
 * Sends `module.purchase.refunded` for what of a charge's refunds was not yet sent (§21: every
 * refund, whatever order its events came in), once its sale is known, and writes the refund line
 * with it recorded as sent. Whether it wrote the line: when it did not, the caller's line stands.
 */
export function announceRefund(tx: Transaction, deps: Deps, sale: SaleLine, line: SaleWithLines["refund"], now: Date, actor: Actor): boolean {
  if (line === null) return false;
  const amount = unannouncedRefund(line);
  // The fee given back as earnings count it, and what analytics counted of it before (§28: net to the cent).
  const feeBack = feeGivenBack(sale, Math.min(line.refunded, sale.amount), line.feeRefunded);
  const feeCounted = line.feeCounted ?? feeGivenBack(sale, Math.min(line.announced, sale.amount), null);
  if (amount === 0 && feeBack === feeCounted) return false;
  ledgerStore(deps.db).setRefundIn(tx, { ...line, announced: line.refunded, feeCounted: feeBack }, now);
  // Counted once, as announced (§28).
  pendingCountStore(deps.db).addIn(tx, refundCounts(sale, amount, feeBack - feeCounted, now));
  // Only the fee's share moved (Stripe reported it later): nothing more was refunded to announce.
  if (amount === 0) return true;
  const refunded = outboundEvent("module.purchase.refunded", [{ kind: "publisher", id: sale.publisherId }], { moduleId: sale.moduleId, purchaseId: sale.purchaseId, amount, currency: sale.currency });
  auditLog(deps.db).record(
    tx,
    actor,
    { action: "module.purchase.refunded", target: sale.purchaseId, details: { moduleId: sale.moduleId, paymentIntentId: sale.paymentIntentId, amount, refunded: line.refunded, charged: sale.amount }, emits: [refunded] },
    now,
  );
  return true;
}
