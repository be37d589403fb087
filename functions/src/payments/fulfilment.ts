import type { Transaction } from "firebase-admin/firestore";
import { outboundEvent } from "../core/event-types";
import type { z } from "zod";
import { businessStore } from "../accounts/business-store";
import { purchaseStore, type DisputeState, type PurchaseOwner, type PurchaseRecord } from "../accounts/purchase-store";
import { userStore } from "../accounts/user-store";
import { auditLog, type Actor } from "../core/audit-log";
import { instanceQueue } from "../core/concurrency";
import { withinDeadline } from "../core/deadline";
import { documentIdProblem } from "../core/documents";
import { parseInput } from "../core/validation";
import type { Deps } from "../deps";
import { moduleStore } from "../marketplace/module-store";
import { ledgerStore, type DisputeLine, type RefundLine, type SaleLine, type SaleWithLines } from "./ledger-store";
import { payoutAccountStore } from "./payout-account-store";
import { recordAccountState } from "./payouts";
import { feeOf } from "./rules";
import { stripeEventStore, type StripeEventSubject } from "./stripe-event-store";
import {
  accountObject,
  chargeObject,
  checkoutSessionObject,
  disputeObject,
  idOf,
  invoiceObject,
  paymentIntentOf,
  periodEndOf,
  stripeSubscriptionObject,
  subscriptionOf,
  SUBSCRIPTION_STATUS,
  type StripeEvent,
} from "./stripe-objects";

/**
 * Fulfilment of module sales (contract §20) from the Stripe webhook, after billing/ verified the
 * signature. Each event is applied in one transaction with its id (`stripeEvents/`), so a replay
 * changes nothing and a failure half-way writes nothing; every write that depends on order
 * (a subscription's status, an account's state) keeps the time of the event that wrote it and
 * refuses an older one. Refunds and disputes are found through the ledger's lines of their
 * payment intent, whichever arrived first: a purchase's status is derived again from all of
 * them whenever one of its facts changes.
 */

export type PaymentOutcome = "applied" | "duplicate" | "stale" | "ignored";

const SUBSCRIPTION_EVENTS = new Set(["customer.subscription.created", "customer.subscription.updated", "customer.subscription.deleted"]);
const PAYMENT_EVENTS = new Set(["checkout.session.completed", "invoice.paid", "charge.refunded", "charge.dispute.created", "charge.dispute.closed", "account.updated"]);

/** Whether an event is one of §20's: a payments event, or a subscription whose metadata names a module (those are purchases, not plans). */
export function isPaymentEvent(event: StripeEvent): boolean {
  if (PAYMENT_EVENTS.has(event.type)) return true;
  return SUBSCRIPTION_EVENTS.has(event.type) && typeof metadataOf(event.data.object).moduleId === "string";
}

const metadataOf = (object: unknown): Record<string, unknown> => {
  const metadata = (object as { metadata?: unknown } | null)?.metadata;
  return metadata && typeof metadata === "object" ? (metadata as Record<string, unknown>) : {};
};

/** The buyer a purchase's metadata names, or why it names none. */
function buyerOf(metadata: Record<string, string> | null | undefined): { moduleId: string; buyerUid: string; owner: PurchaseOwner; quantity: number | null } | string {
  const { moduleId, buyerUid, businessId, quantity } = metadata ?? {};
  if (!moduleId || documentIdProblem(moduleId)) return "the metadata has no valid moduleId";
  if (!buyerUid || documentIdProblem(buyerUid)) return "the metadata has no valid buyerUid";
  if (businessId !== undefined && documentIdProblem(businessId)) return "the metadata's businessId is not a valid id";
  const seats = quantity === undefined ? null : Number(quantity);
  return { moduleId, buyerUid, owner: businessId ? { kind: "business", id: businessId } : { kind: "user", id: buyerUid }, quantity: seats !== null && Number.isInteger(seats) && seats > 0 ? seats : null };
}

/** A purchase's refund and dispute facts, from the ledger lines of all its payments. */
function factsOf(lines: SaleWithLines[]): { refunded: boolean; dispute: DisputeState | null } {
  const refunded = lines.some(({ sale, refund }) => refund !== null && sale.amount > 0 && refund.refunded >= sale.amount);
  const states = lines.map(({ dispute }) => dispute?.state ?? null);
  const dispute = states.includes("lost") ? "lost" : states.includes("open") ? "open" : states.includes("won") ? "won" : null;
  return { refunded, dispute };
}

interface Applied {
  outcome: "applied" | "stale" | "ignored";
  subject: StripeEventSubject;
  reason?: string;
}

/** Applies one verified §20 event; answers once its transaction has committed. */
export async function applyPaymentEvent(deps: Deps, event: StripeEvent): Promise<PaymentOutcome> {
  const { db, clock, logger } = deps;
  const now = clock();
  const events = stripeEventStore(db);
  const actor: Actor = { kind: "billing", id: `stripe:${event.id}` };
  const handler = handlerOf(event);
  if (typeof handler === "string") {
    logger.info("stripe event ignored", { eventId: event.id, type: event.type, reason: handler });
    return "ignored";
  }
  // One instance applies §20's events one at a time: they meet on the same purchases and lines.
  const result = await instanceQueue(db, "payments")("stripe", () =>
    withinDeadline(
      "Firestore (payments)",
      db.runTransaction(async (tx): Promise<Applied | "duplicate"> => {
        if (events.processed(await tx.get(events.ref(event.id)))) return "duplicate";
        const applied = await handler({ deps, tx, now, actor, created: new Date(event.created * 1000) });
        if (applied.outcome !== "ignored") events.recordIn(tx, { id: event.id, type: event.type, created: event.created, subject: applied.subject, outcome: applied.outcome }, now);
        return applied;
      }),
    ),
  );
  const outcome = result === "duplicate" ? "duplicate" : result.outcome;
  logger.info(outcome === "ignored" ? "stripe event ignored" : "stripe event processed", {
    eventId: event.id,
    type: event.type,
    outcome,
    ...(result !== "duplicate" ? { ...result.subject, ...(result.reason ? { reason: result.reason } : {}) } : {}),
  });
  return outcome;
}

interface Context {
  deps: Deps;
  tx: Transaction;
  now: Date;
  actor: Actor;
  /** When Stripe created the event. */
  created: Date;
}

type Handler = (context: Context) => Promise<Applied>;

/** The handler of an event, or why none applies (the event is then acknowledged and logged). */
function handlerOf(event: StripeEvent): Handler | string {
  const object = event.data.object;
  // Whose event it is, read before the object's shape is checked: another feature's checkout or
  // invoice, or another platform's account, is acknowledged whatever else it carries.
  const named = (metadata: unknown, key: string) => typeof (metadata as Record<string, unknown> | null | undefined)?.[key] === "string";
  const loose = object as { metadata?: unknown; subscription_details?: { metadata?: unknown }; parent?: { subscription_details?: { metadata?: unknown } } } | null;
  if (event.type === "checkout.session.completed" && !named(loose?.metadata, "moduleId")) return "not a module's checkout";
  if (event.type === "invoice.paid" && !named(loose?.parent?.subscription_details?.metadata ?? loose?.subscription_details?.metadata, "moduleId")) return "not a module subscription's invoice";
  if (event.type === "account.updated" && !named(loose?.metadata, "publisherId")) return "the account's metadata has no publisherId";
  const parsed = <S extends z.ZodType>(schema: S) => parseInput(schema, object, `The event's data.object is not what a ${event.type} event carries.`);
  switch (event.type) {
    case "checkout.session.completed": {
      const session = parsed(checkoutSessionObject);
      if (session.mode !== "payment") return "a subscription's checkout: its subscription events make the purchase";
      if (session.payment_status !== "paid") return `payment_status is '${session.payment_status}'`;
      const buyer = buyerOf(session.metadata);
      if (typeof buyer === "string") return buyer;
      const paymentIntentId = idOf(session.payment_intent);
      if (!paymentIntentId || documentIdProblem(paymentIntentId)) return "the session has no payment intent";
      if (session.amount_total == null || !session.currency) return "the session has no amount_total or currency";
      const sale = { paymentIntentId, amount: session.amount_total, currency: session.currency, at: new Date((session.created ?? event.created) * 1000), stripeObjectId: session.id };
      return (context) => oneTimePurchase(context, buyer, sale, idOf(session.customer));
    }
    case "customer.subscription.created":
    case "customer.subscription.updated":
    case "customer.subscription.deleted": {
      const subscription = parsed(stripeSubscriptionObject);
      const buyer = buyerOf(subscription.metadata);
      if (typeof buyer === "string") return buyer;
      if (documentIdProblem(subscription.id)) return "the subscription's id is not a valid id";
      const status = SUBSCRIPTION_STATUS.get(subscription.status);
      if (status === undefined || status === "not_written") return `status '${subscription.status}' is not written`;
      const periodEnd = periodEndOf(subscription);
      const [item] = subscription.items.data;
      const quantity = item.quantity ?? 1;
      const amount = item.price.unit_amount ?? 0;
      return (context) =>
        subscriptionPurchase(context, buyer, {
          subscriptionId: subscription.id,
          status,
          currentPeriodEnd: periodEnd === null ? null : new Date(periodEnd * 1000),
          cancelAtPeriodEnd: subscription.cancel_at_period_end ?? false,
          quantity,
          amount,
          currency: item.price.currency ?? "usd",
          feePercent: subscription.application_fee_percent ?? null,
          trial: subscription.status === "trialing" || subscription.trial_end != null,
          customerId: idOf(subscription.customer),
        });
    }
    case "invoice.paid": {
      const invoice = parsed(invoiceObject);
      const buyer = buyerOf(invoice.parent?.subscription_details?.metadata ?? invoice.subscription_details?.metadata);
      if (typeof buyer === "string") return `not a module subscription's invoice (${buyer})`;
      const subscriptionId = subscriptionOf(invoice);
      const paymentIntentId = paymentIntentOf(invoice);
      if (!subscriptionId || documentIdProblem(subscriptionId)) return "the invoice names no subscription";
      if (invoice.amount_paid === 0) return "nothing was charged (a trial's invoice)";
      if (!paymentIntentId || documentIdProblem(paymentIntentId)) return "the invoice names no payment intent";
      return (context) =>
        invoiceSale(context, buyer.moduleId, subscriptionId, {
          paymentIntentId,
          amount: invoice.amount_paid,
          currency: invoice.currency,
          fee: invoice.application_fee_amount ?? null,
          at: new Date(invoice.created * 1000),
          stripeObjectId: invoice.id,
        });
    }
    case "charge.refunded": {
      const charge = parsed(chargeObject);
      const paymentIntentId = idOf(charge.payment_intent);
      if (!paymentIntentId || documentIdProblem(paymentIntentId)) return "the charge has no payment intent";
      return (context) => refund(context, { paymentIntentId, chargeId: charge.id, chargeAmount: charge.amount, refunded: charge.amount_refunded });
    }
    case "charge.dispute.created":
    case "charge.dispute.closed": {
      const dispute = parsed(disputeObject);
      const paymentIntentId = idOf(dispute.payment_intent);
      if (!paymentIntentId || documentIdProblem(paymentIntentId)) return "the dispute has no payment intent";
      const state: DisputeState = event.type === "charge.dispute.created" ? "open" : dispute.status === "lost" ? "lost" : "won";
      return (context) => disputeChange(context, { paymentIntentId, disputeId: dispute.id, amount: dispute.amount, state });
    }
    case "account.updated": {
      const account = parsed(accountObject);
      const publisherId = account.metadata?.publisherId;
      if (!publisherId || documentIdProblem(publisherId)) return "the account's metadata has no publisherId";
      return (context) => accountUpdate(context, publisherId, account);
    }
    default:
      return "not an event of paid modules";
  }
}

/** Reads what a purchase's status depends on: the module, the purchase, and the ledger lines of all its payments. */
async function readPurchase(tx: Transaction, deps: Deps, purchaseId: string, moduleId: string, owner?: PurchaseOwner) {
  const modules = moduleStore(deps.db);
  const purchases = purchaseStore(deps.db);
  const businesses = businessStore(deps.db);
  // A business buyer's document comes in the same read: its Stripe customer is remembered below.
  const [moduleSnapshot, purchaseSnapshot, businessSnapshot] = await tx.getAll(
    modules.moduleRef(moduleId),
    purchases.ref(purchaseId),
    ...(owner?.kind === "business" ? [businesses.ref(owner.id)] : []),
  );
  const lines = await ledgerStore(deps.db).linesOfPurchaseIn(tx, purchaseId);
  return { module: modules.readModule(moduleSnapshot), purchase: purchases.read(purchaseSnapshot), business: businessSnapshot ? businesses.read(businessSnapshot) : null, lines };
}

async function oneTimePurchase(
  { deps, tx, now, actor }: Context,
  buyer: Exclude<ReturnType<typeof buyerOf>, string>,
  payment: { paymentIntentId: string; amount: number; currency: string; at: Date; stripeObjectId: string },
  customerId: string | null,
): Promise<Applied> {
  const { db, config } = deps;
  const purchaseId = payment.paymentIntentId;
  const subject = { purchaseId };
  const { module, purchase, business, lines } = await readPurchase(tx, deps, purchaseId, buyer.moduleId, buyer.owner);
  const own = await ledgerStore(db).linesIn(tx, payment.paymentIntentId);
  if (!module) return { outcome: "ignored", subject, reason: `no module '${buyer.moduleId}'` };
  const quantity = buyer.quantity ?? 1;
  const fee = feeOf(payment.amount, 1, config.payments.feeBasisPoints);
  const sale: SaleLine = { ...payment, publisherId: module.publisherId, moduleId: module.id, purchaseId, fee };
  if (!own.sale) ledgerStore(db).createSaleIn(tx, sale);
  const facts = factsOf([...lines.filter((line) => line.sale.paymentIntentId !== payment.paymentIntentId), { sale: own.sale ?? sale, refund: own.refund, dispute: own.dispute }]);
  const record: PurchaseRecord = {
    id: purchaseId,
    moduleId: module.id,
    publisherId: module.publisherId,
    owner: buyer.owner,
    buyerUid: buyer.buyerUid,
    model: "one_time",
    status: "active",
    baseStatus: "active",
    ...facts,
    quantity,
    amount: Math.round(payment.amount / quantity),
    currency: payment.currency,
    fee,
    currentPeriodEnd: null,
    cancelAtPeriodEnd: false,
    trial: false,
    stripe: { customerId, paymentIntentId: payment.paymentIntentId, subscriptionId: null, eventCreated: null },
    createdAt: purchase?.createdAt ?? now,
    updatedAt: now,
  };
  purchaseStore(db).setIn(tx, record);
  rememberCustomer(tx, deps, buyer.owner, customerId, business?.stripeCustomerId ?? null);
  if (!purchase) {
    const completed = outboundEvent("module.purchase.completed", [{ kind: "publisher", id: module.publisherId }], { moduleId: module.id, purchaseId, amount: payment.amount, currency: payment.currency });
    auditLog(db).record(tx, actor, { action: "module.purchase.completed", target: purchaseId, details: { moduleId: module.id, owner: buyer.owner, model: "one_time", amount: payment.amount, currency: payment.currency, fee }, emits: [completed] }, now);
  }
  return { outcome: "applied", subject };
}

/** The buyer's Stripe customer, for their Billing Portal: the user's own, or the business's when it has none yet. */
function rememberCustomer(tx: Transaction, deps: Deps, owner: PurchaseOwner, customerId: string | null, businessCustomer: string | null) {
  if (!customerId) return;
  if (owner.kind === "user") userStore(deps.db).setStripeCustomerIn(tx, owner.id, customerId);
  else if (businessCustomer === null) businessStore(deps.db).setStripeCustomer(tx, owner.id, customerId);
}

async function subscriptionPurchase(
  { deps, tx, now, actor, created }: Context,
  buyer: Exclude<ReturnType<typeof buyerOf>, string>,
  subscription: {
    subscriptionId: string;
    status: Exclude<ReturnType<typeof SUBSCRIPTION_STATUS.get>, "not_written" | undefined>;
    currentPeriodEnd: Date | null;
    cancelAtPeriodEnd: boolean;
    quantity: number;
    amount: number;
    currency: string;
    feePercent: number | null;
    trial: boolean;
    customerId: string | null;
  },
): Promise<Applied> {
  const { db, config } = deps;
  const purchaseId = subscription.subscriptionId;
  const subject = { purchaseId };
  const { module, purchase, business, lines } = await readPurchase(tx, deps, purchaseId, buyer.moduleId, buyer.owner);
  if (!module) return { outcome: "ignored", subject, reason: `no module '${buyer.moduleId}'` };
  if (purchase?.stripe.eventCreated && created < purchase.stripe.eventCreated) return { outcome: "stale", subject };
  const feeBasisPoints = subscription.feePercent === null ? config.payments.feeBasisPoints : Math.round(subscription.feePercent * 100);
  const record: PurchaseRecord = {
    id: purchaseId,
    moduleId: module.id,
    publisherId: module.publisherId,
    owner: buyer.owner,
    buyerUid: buyer.buyerUid,
    model: "subscription",
    status: subscription.status,
    baseStatus: subscription.status,
    ...factsOf(lines),
    quantity: Math.max(1, subscription.quantity),
    amount: subscription.amount,
    currency: subscription.currency,
    fee: feeOf(subscription.amount, Math.max(1, subscription.quantity), feeBasisPoints),
    currentPeriodEnd: subscription.currentPeriodEnd,
    cancelAtPeriodEnd: subscription.cancelAtPeriodEnd,
    trial: (purchase?.trial ?? false) || subscription.trial,
    stripe: { customerId: subscription.customerId, paymentIntentId: null, subscriptionId: purchaseId, eventCreated: created },
    createdAt: purchase?.createdAt ?? now,
    updatedAt: now,
  };
  purchaseStore(db).setIn(tx, record);
  rememberCustomer(tx, deps, buyer.owner, subscription.customerId, business?.stripeCustomerId ?? null);
  auditLog(db).record(
    tx,
    actor,
    {
      action: purchase ? "module.purchase.updated" : "module.purchase.completed",
      target: purchaseId,
      details: { moduleId: module.id, owner: buyer.owner, model: "subscription", status: subscription.status, quantity: record.quantity },
      emits: purchase ? [] : [outboundEvent("module.purchase.completed", [{ kind: "publisher", id: module.publisherId }], { moduleId: module.id, purchaseId, amount: record.amount, currency: record.currency })],
    },
    now,
  );
  return { outcome: "applied", subject };
}

async function invoiceSale(
  { deps, tx, now }: Context,
  moduleId: string,
  subscriptionId: string,
  payment: { paymentIntentId: string; amount: number; currency: string; fee: number | null; at: Date; stripeObjectId: string },
): Promise<Applied> {
  const { db, config } = deps;
  const subject = { paymentIntentId: payment.paymentIntentId };
  const { module, purchase, lines } = await readPurchase(tx, deps, subscriptionId, moduleId);
  const own = await ledgerStore(db).linesIn(tx, payment.paymentIntentId);
  if (!module) return { outcome: "ignored", subject, reason: `no module '${moduleId}'` };
  if (own.sale) return { outcome: "applied", subject };
  const sale: SaleLine = {
    paymentIntentId: payment.paymentIntentId,
    publisherId: module.publisherId,
    moduleId,
    purchaseId: subscriptionId,
    currency: payment.currency,
    amount: payment.amount,
    fee: payment.fee ?? feeOf(payment.amount, 1, config.payments.feeBasisPoints),
    stripeObjectId: payment.stripeObjectId,
    at: payment.at,
  };
  ledgerStore(db).createSaleIn(tx, sale);
  if (purchase) updateFacts(tx, deps, purchase, [...lines, { sale, refund: own.refund, dispute: own.dispute }], now);
  return { outcome: "applied", subject };
}

/** Writes a purchase's refund and dispute facts (and so its status) when they changed. */
function updateFacts(tx: Transaction, deps: Deps, purchase: PurchaseRecord, lines: Parameters<typeof factsOf>[0], now: Date, actor?: Actor): void {
  const facts = factsOf(lines);
  if (facts.refunded === purchase.refunded && facts.dispute === purchase.dispute) return;
  const changed = { ...purchase, ...facts, updatedAt: now };
  purchaseStore(deps.db).setIn(tx, changed);
  if (actor && facts.refunded && !purchase.refunded) {
    const refunded = outboundEvent("module.purchase.refunded", [{ kind: "publisher", id: purchase.publisherId }], { moduleId: purchase.moduleId, purchaseId: purchase.id, amount: purchase.amount, currency: purchase.currency });
    auditLog(deps.db).record(tx, actor, { action: "module.purchase.refunded", target: purchase.id, details: { moduleId: purchase.moduleId, owner: purchase.owner }, emits: [refunded] }, now);
  }
  if (actor && facts.dispute !== purchase.dispute) {
    auditLog(deps.db).record(tx, actor, { action: "module.purchase.disputed", target: purchase.id, details: { moduleId: purchase.moduleId, dispute: facts.dispute } }, now);
  }
}

/** The facts of the purchase a payment intent's sale belongs to, with `changed` standing in for its stored line. */
async function changeLine(context: Context, paymentIntentId: string, change: (lines: Awaited<ReturnType<ReturnType<typeof ledgerStore>["linesIn"]>>) => { refund?: RefundLine; dispute?: DisputeLine } | null): Promise<Applied> {
  const { deps, tx, now, actor } = context;
  const ledger = ledgerStore(deps.db);
  const subject = { paymentIntentId };
  const own = await ledger.linesIn(tx, paymentIntentId);
  const purchaseRead = own.sale ? await readPurchase(tx, deps, own.sale.purchaseId, own.sale.moduleId) : null;
  const written = change(own);
  if (written === null) return { outcome: "stale", subject };
  if (written.refund) ledger.setRefundIn(tx, written.refund, now);
  if (written.dispute) ledger.setDisputeIn(tx, written.dispute, now);
  if (own.sale && purchaseRead?.purchase) {
    const lines = purchaseRead.lines.map((line) => (line.sale.paymentIntentId === paymentIntentId ? { sale: line.sale, refund: written.refund ?? line.refund, dispute: written.dispute ?? line.dispute } : line));
    updateFacts(tx, deps, purchaseRead.purchase, lines, now, actor);
  }
  return { outcome: "applied", subject };
}

function refund(context: Context, charge: RefundLine): Promise<Applied> {
  // Stripe's amount_refunded only grows: the largest seen is the truth, whatever the order.
  return changeLine(context, charge.paymentIntentId, ({ refund: stored }) => (stored && stored.refunded >= charge.refunded ? null : { refund: charge }));
}

const DISPUTE_ORDER: Record<DisputeState, number> = { open: 0, won: 1, lost: 1 };

function disputeChange(context: Context, dispute: DisputeLine): Promise<Applied> {
  // A dispute is opened, then closed once: a late "created" does not reopen a closed one.
  return changeLine(context, dispute.paymentIntentId, ({ dispute: stored }) => (stored && DISPUTE_ORDER[stored.state] >= DISPUTE_ORDER[dispute.state] && stored.disputeId === dispute.disputeId ? null : { dispute }));
}

async function accountUpdate({ deps, tx, now, actor, created }: Context, publisherId: string, account: z.output<typeof accountObject>): Promise<Applied> {
  const accounts = payoutAccountStore(deps.db);
  const subject = { publisherId };
  const stored = accounts.read(await tx.get(accounts.ref(publisherId)));
  if (!stored || stored.accountId !== account.id) return { outcome: "ignored", subject, reason: "no payouts account of this publisher has that id" };
  return recordAccountState(tx, deps, stored, account, created, actor, now) ? { outcome: "applied", subject } : { outcome: "stale", subject };
}
