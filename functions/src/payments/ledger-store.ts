import { Timestamp, type DocumentReference, type DocumentSnapshot, type Firestore, type Transaction } from "firebase-admin/firestore";
import { z } from "zod";
import { withDeadlines } from "../core/deadline";
import { documentAt, readDocument, timestamp, writeReadAsMissing, oncePerDatabase } from "../core/documents";

/**
 * `ledger/{lineId}`: the money of module sales (contract §20), one line per Stripe object, keyed
 * by the payment intent it belongs to so that a line is found without a query, whatever order
 * the webhook's events come in:
 * - `sale_{paymentIntentId}`: a charge (a one-time purchase's payment, a paid invoice of a module
 *   subscription), written once, with who sold what; an invoice paid without a charge (credit
 *   balance, a coupon: amount 0) has no payment intent and is keyed by its invoice id instead;
 * - `refund_{paymentIntentId}`: what was refunded of that charge so far (Stripe's
 *   `amount_refunded` only grows: the largest seen is kept, so a repeated or late event is exact),
 *   the application fee Stripe gave back with it, and how much was announced as
 *   `module.purchase.refunded` (once the sale is known);
 * - `dispute_{paymentIntentId}`: the charge's dispute and its state; a lost one takes its amount.
 * Earnings read the sale lines of a publisher in a range, then the other two of each (getAll).
 */

const saleLine = z.object({
  kind: z.literal("sale"),
  publisherId: z.string(),
  moduleId: z.string(),
  purchaseId: z.string(),
  currency: z.string(),
  amount: z.number().int().nonnegative(),
  fee: z.number().int().nonnegative(),
  /** The Stripe object that reported it: the checkout session or the invoice. */
  stripeObjectId: z.string(),
  at: timestamp,
  /** A subscription invoice's service period (§27); missing on one-time sales and lines written before it was kept. */
  periodStart: timestamp.optional(),
  periodEnd: timestamp.optional(),
  /** What the invoice's price promised after the subscription ends (§27 "Edges"); missing on lines written before it was kept. */
  fallback: z.enum(["none", "perpetual"]).optional(),
});

const refundLine = z.object({
  kind: z.literal("refund"),
  chargeId: z.string(),
  chargeAmount: z.number().int().nonnegative(),
  refunded: z.number().int().nonnegative(),
  /** Missing on lines written before it existed: those were announced. */
  announced: z.number().int().nonnegative().optional(),
  /** The application fee Stripe gave back so far (missing on lines written before it was read: earnings take a proportional share then). */
  feeRefunded: z.number().int().nonnegative().optional(),
  /** The fee given back that analytics' `net` has counted (§28); missing on lines counted before it: a proportional share of `announced`. */
  feeCounted: z.number().int().nonnegative().optional(),
  updatedAt: timestamp,
});

const disputeLine = z.object({
  kind: z.literal("dispute"),
  disputeId: z.string(),
  amount: z.number().int().nonnegative(),
  state: z.enum(["open", "won", "lost"]),
  updatedAt: timestamp,
});

export type SaleLine = Omit<z.output<typeof saleLine>, "at" | "kind" | "periodStart" | "periodEnd"> & { paymentIntentId: string; at: Date; period?: { start: Date; end: Date } | null };
export type RefundLine = Omit<z.output<typeof refundLine>, "updatedAt" | "kind" | "announced" | "feeRefunded" | "feeCounted"> & {
  paymentIntentId: string;
  announced: number;
  feeRefunded: number | null;
  feeCounted: number | null;
};
export type DisputeLine = Omit<z.output<typeof disputeLine>, "updatedAt" | "kind"> & { paymentIntentId: string };

export type SaleWithLines = { sale: SaleLine; refund: RefundLine | null; dispute: DisputeLine | null };

const saleId = (paymentIntentId: string) => `sale_${paymentIntentId}`;
const refundId = (paymentIntentId: string) => `refund_${paymentIntentId}`;
const disputeId = (paymentIntentId: string) => `dispute_${paymentIntentId}`;

export const ledgerStore = oncePerDatabase((db: Firestore) => {
  const collection = db.collection("ledger");
  const readSale = (snapshot: DocumentSnapshot): SaleLine | null => {
    const stored = readDocument(saleLine, snapshot);
    if (!stored) return null;
    const { kind: _kind, at, periodStart, periodEnd, ...fields } = stored;
    const period = periodStart && periodEnd ? { start: periodStart.toDate(), end: periodEnd.toDate() } : null;
    return { ...fields, paymentIntentId: snapshot.id.slice("sale_".length), at: at.toDate(), period };
  };
  const readRefund = (snapshot: DocumentSnapshot): RefundLine | null => {
    const stored = readDocument(refundLine, snapshot);
    if (!stored) return null;
    const { kind: _kind, updatedAt: _updatedAt, announced, feeRefunded, feeCounted, ...fields } = stored;
    return { ...fields, announced: announced ?? fields.refunded, feeRefunded: feeRefunded ?? null, feeCounted: feeCounted ?? null, paymentIntentId: snapshot.id.slice("refund_".length) };
  };
  const readDispute = (snapshot: DocumentSnapshot): DisputeLine | null => {
    const stored = readDocument(disputeLine, snapshot);
    if (!stored) return null;
    const { kind: _kind, updatedAt: _updatedAt, ...fields } = stored;
    return { ...fields, paymentIntentId: snapshot.id.slice("dispute_".length) };
  };
  /** Each sale with its refund and dispute lines, read in one batch (in a transaction or not). */
  const withLines = async (sales: SaleLine[], getAll: (refs: DocumentReference[]) => Promise<DocumentSnapshot[]>): Promise<SaleWithLines[]> => {
    if (sales.length === 0) return [];
    const others = await getAll(sales.flatMap((sale) => [documentAt(collection, refundId(sale.paymentIntentId)), documentAt(collection, disputeId(sale.paymentIntentId))]));
    return sales.map((sale, index) => ({ sale, refund: readRefund(others[2 * index]), dispute: readDispute(others[2 * index + 1]) }));
  };
  return withDeadlines("Firestore", {
    /** The three lines of one payment intent, read in a transaction. */
    async linesIn(tx: Transaction, paymentIntentId: string) {
      const [sale, refund, dispute] = await tx.getAll(documentAt(collection, saleId(paymentIntentId)), documentAt(collection, refundId(paymentIntentId)), documentAt(collection, disputeId(paymentIntentId)));
      return { sale: readSale(sale), refund: readRefund(refund), dispute: readDispute(dispute) };
    },
    /** Every sale of one purchase (a module subscription has one per paid invoice), with its refund and dispute lines. */
    async linesOfPurchaseIn(tx: Transaction, purchaseId: string): Promise<SaleWithLines[]> {
      const sales = (await tx.get(collection.where("purchaseId", "==", purchaseId))).docs.map((doc) => readSale(doc)!);
      return withLines(sales, (refs) => tx.getAll(...refs));
    },
    /** A sale line the transaction has read as missing (`linesIn`). */
    createSaleIn(tx: Transaction, line: SaleLine): void {
      const { paymentIntentId, at, period, ...fields } = line;
      const kept = period ? { periodStart: Timestamp.fromDate(period.start), periodEnd: Timestamp.fromDate(period.end) } : {};
      writeReadAsMissing(tx, documentAt(collection, saleId(paymentIntentId)), { kind: "sale", ...fields, ...kept, at: Timestamp.fromDate(at) });
    },
    setRefundIn(tx: Transaction, line: RefundLine, now: Date): void {
      const { paymentIntentId, feeRefunded, feeCounted, ...fields } = line;
      tx.set(documentAt(collection, refundId(paymentIntentId)), {
        kind: "refund",
        ...fields,
        ...(feeRefunded === null ? {} : { feeRefunded }),
        ...(feeCounted === null ? {} : { feeCounted }),
        updatedAt: Timestamp.fromDate(now),
      });
    },
    setDisputeIn(tx: Transaction, line: DisputeLine, now: Date): void {
      const { paymentIntentId, ...fields } = line;
      tx.set(documentAt(collection, disputeId(paymentIntentId)), { kind: "dispute", ...fields, updatedAt: Timestamp.fromDate(now) });
    },
    /** A publisher's sales from `from` (inclusive) to `to` (exclusive), with each one's refund and dispute lines. */
    async salesOf(publisherId: string, from: Date, to: Date): Promise<SaleWithLines[]> {
      const snapshot = await collection.where("publisherId", "==", publisherId).where("at", ">=", Timestamp.fromDate(from)).where("at", "<", Timestamp.fromDate(to)).get();
      return withLines(snapshot.docs.map((doc) => readSale(doc)!), (refs) => db.getAll(...refs));
    },
  });
});
