import type { z } from "zod";
import type { DisputeState } from "../accounts/purchase-store";
import type { Actor } from "../core/audit-log";
import { instanceQueue } from "../core/concurrency";
import { withinDeadline } from "../core/deadline";
import { documentIdProblem } from "../core/documents";
import { parseInput } from "../core/validation";
import type { Deps } from "../deps";
import type { Applied, Context, Handler } from "./fulfilment-context";
import { disputeChange, invoiceSale, refund } from "./ledger-from-stripe";
import { payoutAccountStore } from "./payout-account-store";
import { recordAccountState } from "./payouts";
import { oneTimePurchase, subscriptionPurchase } from "./purchases-from-stripe";
import { stripeEventStore } from "./stripe-event-store";
import { applicationFeeRefunded, paymentIntentFee, pricePromise } from "./stripe-reads";
import { accountObject, buyerOf, chargeObject, checkoutSessionObject, disputeObject, idOf, invoiceObject, invoicePriceOf, paymentIntentOf, promiseOf, servicePeriodOf, subscriptionOf, type StripeEvent } from "./stripe-objects";

/**
 * Fulfilment of module sales (contract §20) from the Stripe webhook, after billing/ verified the
 * signature: which events are §20's, what each carries, and the handler that applies it. Each
 * event is applied in one transaction with its id (`stripeEvents/`), so a replay changes nothing
 * and a failure half-way writes nothing. Purchases are written by purchases-from-stripe.ts (a
 * subscription from Stripe's current state of it), the ledger by ledger-from-stripe.ts.
 */

export type PaymentOutcome = "applied" | "duplicate" | "stale" | "ignored";

const SUBSCRIPTION_EVENTS = new Set(["customer.subscription.created", "customer.subscription.updated", "customer.subscription.deleted"]);
const CHECKOUT_EVENTS = new Set(["checkout.session.completed", "checkout.session.async_payment_succeeded", "checkout.session.async_payment_failed"]);
const PAYMENT_EVENTS = new Set([...CHECKOUT_EVENTS, "invoice.paid", "charge.refunded", "charge.dispute.created", "charge.dispute.closed", "account.updated"]);

/** Whether an event is one of §20's: a payments event, or a subscription whose metadata names a module (those are purchases, not plans). */
export function isPaymentEvent(event: StripeEvent): boolean {
  if (PAYMENT_EVENTS.has(event.type)) return true;
  return SUBSCRIPTION_EVENTS.has(event.type) && typeof metadataOf(event.data.object).moduleId === "string";
}

const metadataOf = (object: unknown): Record<string, unknown> => {
  const metadata = (object as { metadata?: unknown } | null)?.metadata;
  return metadata && typeof metadata === "object" ? (metadata as Record<string, unknown>) : {};
};

/** Applies one verified §20 event; answers once its transaction has committed. */
export async function applyPaymentEvent(deps: Deps, event: StripeEvent): Promise<PaymentOutcome> {
  const { db, clock, logger } = deps;
  const now = clock();
  const events = stripeEventStore(db);
  const actor: Actor = { kind: "billing", id: `stripe:${event.id}` };
  // A replay needs nothing from Stripe: it is answered at once (and again inside the transaction, which decides).
  if (events.processed(await withinDeadline("Firestore (payments)", events.ref(event.id).get()))) {
    logger.info("stripe event processed", { eventId: event.id, type: event.type, outcome: "duplicate" });
    return "duplicate";
  }
  const handler = await handlerOf(event, deps);
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
        const applied = await handler({ deps, tx, now, actor });
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

/**
 * The handler of an event, or why none applies (the event is then acknowledged and logged). What
 * a handler needs from Stripe that never changes once true (a payment's fee, the fee refunded so
 * far, which only grows) is read here, before the transaction, so that no transaction holds its
 * locks across a call to Stripe; a module subscription is read inside it (its order matters).
 */
async function handlerOf(event: StripeEvent, deps: Deps): Promise<Handler | string> {
  const object = event.data.object;
  // Whose event it is, read before the object's shape is checked: another feature's checkout or
  // invoice, or another platform's account, is acknowledged whatever else it carries.
  const named = (metadata: unknown, key: string) => typeof (metadata as Record<string, unknown> | null | undefined)?.[key] === "string";
  const loose = object as { metadata?: unknown; subscription_details?: { metadata?: unknown }; parent?: { subscription_details?: { metadata?: unknown } } } | null;
  if (CHECKOUT_EVENTS.has(event.type) && !named(loose?.metadata, "moduleId")) return "not a module's checkout";
  if (event.type === "invoice.paid" && !named(loose?.parent?.subscription_details?.metadata ?? loose?.subscription_details?.metadata, "moduleId")) return "not a module subscription's invoice";
  if (event.type === "account.updated" && !named(loose?.metadata, "publisherId")) return "the account's metadata has no publisherId";
  const parsed = <S extends z.ZodType>(schema: S) => parseInput(schema, object, `The event's data.object is not what a ${event.type} event carries.`);
  switch (event.type) {
    case "checkout.session.completed":
    case "checkout.session.async_payment_succeeded": {
      const session = parsed(checkoutSessionObject);
      if (session.mode !== "payment") return "a subscription's checkout: its subscription events make the purchase";
      // A delayed payment method completes the session unpaid; its async_payment_succeeded pays it.
      if (session.payment_status !== "paid") return `payment_status is '${session.payment_status}': nothing is granted until it is paid`;
      const buyer = buyerOf(session.metadata);
      if (typeof buyer === "string") return buyer;
      const paymentIntentId = idOf(session.payment_intent);
      if (!paymentIntentId || documentIdProblem(paymentIntentId)) return "the session has no payment intent";
      if (session.amount_total == null || !session.currency) return "the session has no amount_total or currency";
      // The fee Stripe took (the payment intent's application fee), never worked out again from today's settings.
      const fee = await paymentIntentFee(deps, paymentIntentId);
      if (fee === null) return "Stripe has no payment intent of this id";
      const payment = { paymentIntentId, amount: session.amount_total, currency: session.currency, fee, at: new Date((session.created ?? event.created) * 1000), stripeObjectId: session.id, customerId: idOf(session.customer) };
      return (context) => oneTimePurchase(context, buyer, payment);
    }
    case "checkout.session.async_payment_failed":
      return "the delayed payment failed: the unpaid session granted nothing";
    case "customer.subscription.created":
    case "customer.subscription.updated":
    case "customer.subscription.deleted": {
      // A prompt only: the handler applies the subscription as Stripe has it now.
      const subscriptionId = (object as { id?: unknown } | null)?.id;
      if (typeof subscriptionId !== "string" || documentIdProblem(subscriptionId)) return "the subscription's id is not a valid id";
      return (context) => subscriptionPurchase(context, subscriptionId);
    }
    case "invoice.paid": {
      const invoice = parsed(invoiceObject);
      const buyer = buyerOf(invoice.parent?.subscription_details?.metadata ?? invoice.subscription_details?.metadata);
      if (typeof buyer === "string") return `not a module subscription's invoice (${buyer})`;
      const subscriptionId = subscriptionOf(invoice);
      const paymentIntentId = paymentIntentOf(invoice);
      if (!subscriptionId || documentIdProblem(subscriptionId)) return "the invoice names no subscription";
      // A trial's invoice bills nothing: it neither counts toward a fallback nor breaks a run (§27).
      // One paid by credit balance or a coupon billed the price and charged nothing: it counts.
      if (invoice.amount_paid === 0 && (invoice.subtotal ?? 0) === 0) return "nothing was billed (a trial's invoice)";
      // Charged nothing: no payment intent, so its line is keyed by the invoice.
      const lineKey = invoice.amount_paid === 0 ? invoice.id : paymentIntentId;
      if (!lineKey || documentIdProblem(lineKey)) return "the invoice names no payment intent";
      const billed = invoicePriceOf(invoice);
      const fallback = billed === null ? null : billed.metadata !== undefined ? promiseOf(billed) : await pricePromise(deps, billed.id);
      const payment = { paymentIntentId: lineKey, amount: invoice.amount_paid, currency: invoice.currency, fee: invoice.application_fee_amount ?? null, at: new Date(invoice.created * 1000), stripeObjectId: invoice.id, period: servicePeriodOf(invoice), fallback };
      return (context) => invoiceSale(context, buyer.moduleId, subscriptionId, payment);
    }
    case "charge.refunded": {
      const charge = parsed(chargeObject);
      const paymentIntentId = idOf(charge.payment_intent);
      if (!paymentIntentId || documentIdProblem(paymentIntentId)) return "the charge has no payment intent";
      const applicationFeeId = idOf(charge.application_fee);
      const feeRefunded = applicationFeeId === null ? 0 : ((await applicationFeeRefunded(deps, applicationFeeId)) ?? 0);
      return (context) => refund(context, { paymentIntentId, chargeId: charge.id, chargeAmount: charge.amount, refunded: charge.amount_refunded, feeRefunded });
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
      const created = new Date(event.created * 1000);
      return (context) => accountUpdate(context, publisherId, account, created);
    }
    default:
      return "not an event of paid modules";
  }
}

/** A connected account's state: kept in the order Stripe created the events (an older one changes nothing). */
async function accountUpdate({ deps, tx, now, actor }: Context, publisherId: string, account: z.output<typeof accountObject>, created: Date): Promise<Applied> {
  const accounts = payoutAccountStore(deps.db);
  const subject = { publisherId };
  const stored = accounts.read(await tx.get(accounts.ref(publisherId)));
  if (!stored || stored.accountId !== account.id) return { outcome: "ignored", subject, reason: "no payouts account of this publisher has that id" };
  return recordAccountState(tx, deps, stored, account, created, actor, now) ? { outcome: "applied", subject } : { outcome: "stale", subject };
}
