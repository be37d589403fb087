import type { DisputeState } from "../accounts/purchase-store";
import type { Applied, Context } from "./fulfilment-context";
import { ledgerStore, type DisputeLine, type RefundLine, type SaleLine, type SaleWithLines } from "./ledger-store";
import { pendingCountStore } from "../metrics/pending-count-store";
import { announceRefund, readPurchase, writeFacts } from "./purchase-state";
import { lostDisputeCounts, purchaseCount, saleCounts } from "./sale-metrics";

/**
 * The ledger's lines from Stripe's objects (§20): a module subscription's paid invoice (a sale),
 * a charge's refunds and its dispute. Each is keyed by its payment intent, so it is found whatever
 * order the events come in; the purchase's facts are derived again from all its lines whenever
 * one changes.
 */

export interface InvoicePayment {
  paymentIntentId: string;
  amount: number;
  currency: string;
  fee: number | null;
  at: Date;
  stripeObjectId: string;
  /** The service period it pays for (§27), when the invoice names one. */
  period: { start: Date; end: Date } | null;
  /** What its price promised (§27 "Edges"); null when the invoice names no price. */
  fallback: "none" | "perpetual" | null;
}

/** A paid invoice of a module subscription: one sale line, written once. */
export async function invoiceSale(context: Context, moduleId: string, subscriptionId: string, payment: InvoicePayment): Promise<Applied> {
  const { deps, tx, now, actor } = context;
  const { db } = deps;
  const subject = { paymentIntentId: payment.paymentIntentId };
  const { module, purchase, lines } = await readPurchase(tx, deps, subscriptionId, moduleId);
  const own = await ledgerStore(db).linesIn(tx, payment.paymentIntentId);
  if (!module) return { outcome: "ignored", subject, reason: `no module '${moduleId}'` };
  if (own.sale) return { outcome: "applied", subject };
  // The invoice's application fee as Stripe reports it; none on the invoice: none taken.
  const { fallback, ...charged } = payment;
  const sale: SaleLine = { ...charged, ...(fallback ? { fallback } : {}), publisherId: module.publisherId, moduleId, purchaseId: subscriptionId, fee: payment.fee ?? 0 };
  ledgerStore(db).createSaleIn(tx, sale);
  // Counted with its line (§28): the sale's money, and a trial's first paid invoice as its conversion.
  const converts = purchase !== null && purchase.trial && !purchase.trialConverted;
  pendingCountStore(db).addIn(tx, [...saleCounts(sale), ...(converts ? [purchaseCount(moduleId, "trialConversions", now)] : [])]);
  if (purchase) writeFacts(tx, deps, purchase, [...lines, { sale, refund: own.refund, dispute: own.dispute }], now, actor, converts ? { trialConverted: true } : {});
  announceRefund(tx, deps, sale, own.refund, now, actor);
  return { outcome: "applied", subject };
}

/** Writes a payment intent's refund or dispute line, then the facts of the purchase its sale belongs to (when the sale is known). */
async function changeLine(context: Context, paymentIntentId: string, change: (stored: { refund: RefundLine | null; dispute: DisputeLine | null }) => { refund?: RefundLine; dispute?: DisputeLine } | null): Promise<Applied> {
  const { deps, tx, now, actor } = context;
  const ledger = ledgerStore(deps.db);
  const subject = { paymentIntentId };
  const own = await ledger.linesIn(tx, paymentIntentId);
  const purchaseRead = own.sale ? await readPurchase(tx, deps, own.sale.purchaseId, own.sale.moduleId) : null;
  const written = change(own);
  if (written === null) return { outcome: "stale", subject };
  // A refund of a known sale is announced, and its line written with what was announced; otherwise the line is written as it is.
  if (written.refund && !(own.sale && announceRefund(tx, deps, own.sale, written.refund, now, actor))) ledger.setRefundIn(tx, written.refund, now);
  if (written.dispute) ledger.setDisputeIn(tx, written.dispute, now);
  // A lost dispute takes its amount back (§28), counted once, when its sale is known.
  if (written.dispute?.state === "lost" && own.dispute?.state !== "lost" && own.sale) pendingCountStore(deps.db).addIn(tx, lostDisputeCounts(own.sale, written.dispute.amount, now));
  if (own.sale && purchaseRead?.purchase) {
    const lines: SaleWithLines[] = purchaseRead.lines.map((line) => (line.sale.paymentIntentId === paymentIntentId ? { sale: line.sale, refund: written.refund ?? line.refund, dispute: written.dispute ?? line.dispute } : line));
    writeFacts(tx, deps, purchaseRead.purchase, lines, now, actor);
  }
  return { outcome: "applied", subject };
}

/**
 * A charge's refunds so far: Stripe's amount_refunded only grows, so the largest seen is the truth,
 * whatever the order. The fee given back with them is the application fee's amount_refunded, read
 * from Stripe before the transaction (it too only grows).
 */
export function refund(context: Context, charge: Omit<RefundLine, "announced" | "feeCounted">): Promise<Applied> {
  const feeRefunded = charge.feeRefunded ?? 0;
  return changeLine(context, charge.paymentIntentId, ({ refund: stored }) =>
    stored && stored.refunded >= charge.refunded && (stored.feeRefunded ?? 0) >= feeRefunded
      ? null
      : { refund: { ...charge, refunded: Math.max(charge.refunded, stored?.refunded ?? 0), feeRefunded: Math.max(feeRefunded, stored?.feeRefunded ?? 0), announced: stored?.announced ?? 0, feeCounted: stored?.feeCounted ?? null } },
  );
}

const DISPUTE_ORDER: Record<DisputeState, number> = { open: 0, won: 1, lost: 1 };

/** A charge's dispute: opened, then closed once; a late "created" does not reopen a closed one. */
export function disputeChange(context: Context, dispute: DisputeLine): Promise<Applied> {
  return changeLine(context, dispute.paymentIntentId, ({ dispute: stored }) => (stored && DISPUTE_ORDER[stored.state] >= DISPUTE_ORDER[dispute.state] && stored.disputeId === dispute.disputeId ? null : { dispute }));
}
