import { utcDay } from "../core/time";
import type { MetricCount } from "../metrics/metric-store";
import type { SaleLine } from "./ledger-store";

/**
 * What §20's money and purchases count in analytics (§28), from the same figures as the ledger:
 * a sale's gross and what the publisher keeps of it (net), on the day Stripe charged it; a
 * refund's amount and what it takes back of the net (the refund less the fee Stripe gave back with
 * it, as earnings count it), and a lost dispute's amount, on the day the service learns of them.
 */

export function saleCounts(sale: SaleLine): MetricCount[] {
  const day = utcDay(sale.at);
  const { moduleId, currency } = sale;
  return [
    { moduleId, day, metric: "revenue", amount: sale.amount, currency },
    { moduleId, day, metric: "net", amount: sale.amount - sale.fee, currency },
  ];
}

/** `amount` more of a sale refunded, and `feeBack` more of its fee given back with it (the two may come apart). */
export function refundCounts(sale: SaleLine, amount: number, feeBack: number, now: Date): MetricCount[] {
  const { moduleId, currency } = sale;
  const day = utcDay(now);
  return [
    ...(amount === 0 ? [] : [{ moduleId, day, metric: "refunds", amount, currency }]),
    { moduleId, day, metric: "net", amount: -(amount - feeBack), currency },
  ];
}

export function lostDisputeCounts(sale: SaleLine, amount: number, now: Date): MetricCount[] {
  const { moduleId, currency } = sale;
  const day = utcDay(now);
  return [
    { moduleId, day, metric: "refunds", amount, currency },
    { moduleId, day, metric: "net", amount: -amount, currency },
  ];
}

/** One of a purchase's moments: a purchase completed, a trial started, a trial's first paid invoice. */
export const purchaseCount = (moduleId: string, metric: "purchases" | "trials" | "trialConversions", now: Date): MetricCount => ({ moduleId, day: utcDay(now), metric, amount: 1 });
