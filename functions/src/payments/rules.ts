import { fallbackUntilOf, laterOf } from "../access/fallback";
import type { PurchaseStatus } from "../access/rules";
import type { DisputeLine, RefundLine, SaleLine } from "./ledger-store";

/** The money rules of paid modules (contract §20), as pure functions of their inputs. */

/** The marketplace's fee on `quantity` of `amount`: amount × quantity × percent / 100, rounded half up, in exact integers. */
export function feeOf(amount: number, quantity: number, basisPoints: number): number {
  return Math.floor((amount * quantity * basisPoints + 5_000) / 10_000);
}

/** The part of a fee given back with a refund of `refunded` of `amount`: proportional, rounded half up. */
export function refundedFee(fee: number, amount: number, refunded: number): number {
  if (amount === 0) return 0;
  return Math.min(fee, Math.floor((fee * Math.min(refunded, amount) * 2 + amount) / (2 * amount)));
}

type DisputeState = DisputeLine["state"];

/**
 * A purchase's refund and dispute facts, from the ledger lines of all its payments: refunded when
 * one of its charges was refunded in full; a lost dispute outweighs an open one, which outweighs a
 * won one.
 */
export function purchaseFacts(lines: { sale: Pick<SaleLine, "amount">; refund: Pick<RefundLine, "refunded"> | null; dispute: Pick<DisputeLine, "state"> | null }[]): { refunded: boolean; dispute: DisputeState | null } {
  const refunded = lines.some(({ sale, refund }) => refund !== null && sale.amount > 0 && refund.refunded >= sale.amount);
  const states = lines.map(({ dispute }) => dispute?.state ?? null);
  const dispute = states.includes("lost") ? "lost" : states.includes("open") ? "open" : states.includes("won") ? "won" : null;
  return { refunded, dispute };
}

/**
 * A subscription's `fallbackUntil` after its lines changed (§27): what its paid invoices earn now,
 * never earlier than what was stored. An invoice refunded in full, or whose dispute was lost, is
 * not paid; a partial refund leaves it paid (as it leaves a one-time purchase its access). The
 * promise is each invoice's price's (lines recorded before it was kept: the purchase's); one paid
 * by credit or a coupon (amount 0) counts.
 */
export function earnedFallback(
  purchase: { fallback: "none" | "perpetual"; fallbackUntil: Date | null },
  lines: { sale: Pick<SaleLine, "amount" | "period" | "fallback">; refund: Pick<RefundLine, "refunded"> | null; dispute: Pick<DisputeLine, "state"> | null }[],
): Date | null {
  if (purchase.fallback !== "perpetual") return purchase.fallbackUntil;
  const invoices = lines.flatMap(({ sale, refund, dispute }) => {
    if (!sale.period) return [];
    const paid = !(refund !== null && sale.amount > 0 && refund.refunded >= sale.amount) && dispute?.state !== "lost";
    return [{ start: sale.period.start, end: sale.period.end, counts: paid && (sale.fallback ?? purchase.fallback) === "perpetual" }];
  });
  return laterOf(purchase.fallbackUntil, fallbackUntilOf(invoices));
}

/**
 * Whether `module.purchase.completed` is due now (§21): once, when a purchase first grants paid
 * access. A one-time purchase is written only once paid; a subscription completes when Stripe
 * first calls it active (a trial or an unpaid subscription does not).
 */
export function completesNow(completedAt: Date | null, model: "one_time" | "subscription", baseStatus: PurchaseStatus): boolean {
  return completedAt === null && (model === "one_time" || baseStatus === "active");
}

/** What of a charge's refunds has yet to be sent as `module.purchase.refunded`: Stripe's cumulative amount less what was announced. */
export function unannouncedRefund(refund: Pick<RefundLine, "refunded" | "announced"> | null): number {
  return refund === null ? 0 : Math.max(0, refund.refunded - refund.announced);
}

/**
 * The fee given back with `refunded` of a sale: what Stripe reported (a refund made from Stripe's
 * Dashboard may give none back); lines recorded before that was read, a proportional share. At
 * most the fee. Earnings and analytics' `net` (§28) both take it from here, so they agree to the cent.
 */
export function feeGivenBack(sale: { fee: number; amount: number }, refunded: number, feeRefunded: number | null): number {
  return Math.min(sale.fee, feeRefunded ?? refundedFee(sale.fee, sale.amount, refunded));
}

export interface EarningsFigures {
  sales: number;
  gross: number;
  fees: number;
  refunds: number;
  net: number;
}

export interface SaleWithOutcome {
  sale: Pick<SaleLine, "moduleId" | "currency" | "amount" | "fee">;
  refund: (Pick<RefundLine, "refunded"> & { feeRefunded?: number | null }) | null;
  dispute: Pick<DisputeLine, "state" | "amount"> | null;
}

/**
 * A publisher's earnings over sales: each sale counts once (with the fee Stripe took), with what
 * was later refunded of it (and the fee Stripe gave back) and a lost dispute's amount; net =
 * gross − fees − refunds.
 * Totals per currency and per module and currency, ordered by currency, then module.
 */
export function earningsOf(sales: SaleWithOutcome[]) {
  const totals = new Map<string, EarningsFigures>();
  const modules = new Map<string, EarningsFigures & { moduleId: string; currency: string }>();
  const add = (figures: EarningsFigures, sale: SaleWithOutcome) => {
    const refunded = Math.min(sale.refund?.refunded ?? 0, sale.sale.amount);
    const lost = sale.dispute?.state === "lost" ? sale.dispute.amount : 0;
    const fee = sale.sale.fee - feeGivenBack(sale.sale, refunded, sale.refund?.feeRefunded ?? null);
    figures.sales += 1;
    figures.gross += sale.sale.amount;
    figures.fees += fee;
    figures.refunds += refunded + lost;
    figures.net = figures.gross - figures.fees - figures.refunds;
  };
  const zero = (): EarningsFigures => ({ sales: 0, gross: 0, fees: 0, refunds: 0, net: 0 });
  for (const sale of sales) {
    const { currency, moduleId } = sale.sale;
    if (!totals.has(currency)) totals.set(currency, zero());
    add(totals.get(currency)!, sale);
    const key = `${moduleId}\u0000${currency}`;
    if (!modules.has(key)) modules.set(key, { moduleId, currency, ...zero() });
    add(modules.get(key)!, sale);
  }
  return {
    totals: [...totals].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([currency, figures]) => ({ currency, ...figures })),
    modules: [...modules.values()].sort((a, b) => (a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : a.moduleId < b.moduleId ? -1 : a.moduleId > b.moduleId ? 1 : 0)),
  };
}
