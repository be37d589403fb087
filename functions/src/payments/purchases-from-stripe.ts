import type { Transaction } from "firebase-admin/firestore";
import { businessStore } from "../accounts/business-store";
import { purchaseStore, type PurchaseOwner, type PurchaseRecord } from "../accounts/purchase-store";
import { userStore } from "../accounts/user-store";
import { fallbackHolderStore } from "../accounts/fallback-holder-store";
import { fallbackHoldersIn, holdersDue, holdersRecordedAt } from "../accounts/fallback-holders";
import { auditLog } from "../core/audit-log";
import { outboundEvent } from "../core/event-types";
import type { Deps } from "../deps";
import type { Applied, Context } from "./fulfilment-context";
import { ledgerStore, type SaleLine } from "./ledger-store";
import { pendingCountStore } from "../metrics/pending-count-store";
import { announceRefund, auditFallback, readPurchase } from "./purchase-state";
import { purchaseCount, saleCounts } from "./sale-metrics";
import { completesNow, earnedFallback, feeOf, purchaseFacts } from "./rules";
import { currentSubscription } from "./stripe-reads";
import { buyerOf, fallbackOf, idOf, periodEndOf, SUBSCRIPTION_STATUS, type Buyer } from "./stripe-objects";

/**
 * Purchases from Stripe's objects (§20): a paid one-time checkout, and a module subscription as
 * Stripe has it now. `module.purchase.completed` goes out once, in the transaction that first
 * makes a purchase grant paid access.
 */

export interface OneTimePayment {
  paymentIntentId: string;
  amount: number;
  currency: string;
  /** The application fee Stripe took on it. */
  fee: number;
  at: Date;
  stripeObjectId: string;
  customerId: string | null;
}

/** A paid checkout (at once, or a delayed payment method's later success): an active one-time purchase. */
export async function oneTimePurchase({ deps, tx, now, actor }: Context, buyer: Buyer, payment: OneTimePayment): Promise<Applied> {
  const { db } = deps;
  const purchaseId = payment.paymentIntentId;
  const subject = { purchaseId };
  const { module, purchase, business, lines } = await readPurchase(tx, deps, purchaseId, buyer.moduleId, buyer.owner);
  const own = await ledgerStore(db).linesIn(tx, payment.paymentIntentId);
  if (!module) return { outcome: "ignored", subject, reason: `no module '${buyer.moduleId}'` };
  const quantity = buyer.quantity ?? 1;
  const fee = own.sale?.fee ?? payment.fee;
  const { customerId, ...paid } = payment;
  const sale: SaleLine = own.sale ?? { ...paid, publisherId: module.publisherId, moduleId: module.id, purchaseId, fee };
  if (!own.sale) {
    ledgerStore(db).createSaleIn(tx, sale);
    pendingCountStore(db).addIn(tx, saleCounts(sale));
  }
  const facts = purchaseFacts([...lines.filter((line) => line.sale.paymentIntentId !== payment.paymentIntentId), { sale, refund: own.refund, dispute: own.dispute }]);
  const completes = completesNow(purchase?.completedAt ?? null, "one_time", "active");
  const record: PurchaseRecord = {
    ...whoBoughtWhat(purchaseId, module, buyer),
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
    completedAt: purchase?.completedAt ?? now,
    fallback: "none",
    fallbackUntil: null,
    fallbackHoldersAt: null,
    trialConverted: false,
    stripe: { customerId, paymentIntentId: payment.paymentIntentId, subscriptionId: null },
    createdAt: purchase?.createdAt ?? now,
    updatedAt: now,
  };
  purchaseStore(db).setIn(tx, record);
  rememberCustomer(tx, deps, buyer.owner, customerId, business?.stripeCustomerId ?? null);
  if (completes) {
    pendingCountStore(db).addIn(tx, [purchaseCount(module.id, "purchases", now)]);
    const completed = outboundEvent("module.purchase.completed", [{ kind: "publisher", id: module.publisherId }], { moduleId: module.id, purchaseId, amount: payment.amount, currency: payment.currency });
    auditLog(db).record(tx, actor, { action: "module.purchase.completed", target: purchaseId, details: { moduleId: module.id, owner: buyer.owner, model: "one_time", amount: payment.amount, currency: payment.currency, fee }, emits: [completed] }, now);
  }
  // A refund whose event came before the sale's is announced now that the sale is known.
  announceRefund(tx, deps, sale, own.refund, now, actor);
  return { outcome: "applied", subject };
}

/**
 * A module subscription's event: the subscription is read from Stripe inside the transaction,
 * after the purchase it writes, so that of two events applied at once the one committed last
 * holds what Stripe said last.
 */
export async function subscriptionPurchase(context: Context, subscriptionId: string): Promise<Applied> {
  const { deps, tx, now, actor } = context;
  const { db, config } = deps;
  const purchaseId = subscriptionId;
  const subject = { purchaseId };
  await tx.get(purchaseStore(db).ref(purchaseId));
  const subscription = await currentSubscription(deps, subscriptionId);
  if (!subscription) return { outcome: "ignored", subject, reason: "Stripe has no subscription of this id" };
  const buyer = buyerOf(subscription.metadata);
  if (typeof buyer === "string") return { outcome: "ignored", subject, reason: `Stripe's subscription: ${buyer}` };
  const status = SUBSCRIPTION_STATUS.get(subscription.status);
  if (status === undefined || status === "not_written") return { outcome: "ignored", subject, reason: `Stripe's status '${subscription.status}' is not written` };
  const { module, purchase, business, lines } = await readPurchase(tx, deps, purchaseId, buyer.moduleId, buyer.owner);
  if (!module) return { outcome: "ignored", subject, reason: `no module '${buyer.moduleId}'` };
  const [item] = subscription.items.data;
  const quantity = Math.max(1, item.quantity ?? 1);
  const amount = item.price.unit_amount ?? 0;
  const periodEnd = periodEndOf(subscription);
  const feeBasisPoints = subscription.application_fee_percent == null ? config.payments.feeBasisPoints : Math.round(subscription.application_fee_percent * 100);
  const completes = completesNow(purchase?.completedAt ?? null, "subscription", status);
  // The fallback its price promised (§27), and what its paid invoices earned so far.
  const fallback = purchase?.fallback === "perpetual" ? "perpetual" : fallbackOf(subscription);
  const fallbackUntil = earnedFallback({ fallback, fallbackUntil: purchase?.fallbackUntil ?? null }, lines);
  const record: PurchaseRecord = {
    ...whoBoughtWhat(purchaseId, module, buyer),
    model: "subscription",
    status,
    baseStatus: status,
    ...purchaseFacts(lines),
    quantity,
    amount,
    currency: item.price.currency ?? "usd",
    fee: feeOf(amount, quantity, feeBasisPoints),
    currentPeriodEnd: periodEnd === null ? null : new Date(periodEnd * 1000),
    cancelAtPeriodEnd: subscription.cancel_at_period_end ?? false,
    trial: (purchase?.trial ?? false) || subscription.status === "trialing" || subscription.trial_end != null,
    completedAt: purchase?.completedAt ?? (completes ? now : null),
    fallback,
    fallbackUntil,
    fallbackHoldersAt: purchase?.fallbackHoldersAt ?? null,
    trialConverted: purchase?.trialConverted ?? false,
    stripe: { customerId: idOf(subscription.customer), paymentIntentId: null, subscriptionId: purchaseId },
    createdAt: purchase?.createdAt ?? now,
    updatedAt: now,
  };
  // A business's purchase that ends here with a fallback: the members it entitled now keep it (§27);
  // granting again, it forgets who kept it last time.
  record.fallbackHoldersAt = holdersRecordedAt(record, now);
  const holders = holdersDue(record, now) ? await fallbackHoldersIn(tx, db, record) : null;
  if (holders) {
    fallbackHolderStore(db).recordIn(tx, { id: purchaseId, moduleId: module.id, businessId: buyer.owner.id }, holders, now);
    record.fallbackHoldersAt = now;
  }
  // Counted with the change (§28): a completed purchase, a trial started, and a trial whose paid invoice came before this event.
  const startsTrial = record.trial && !(purchase?.trial ?? false);
  const converts = record.trial && !record.trialConverted && lines.length > 0;
  if (converts) record.trialConverted = true;
  pendingCountStore(db).addIn(tx, [...(completes ? [purchaseCount(module.id, "purchases", now)] : []), ...(startsTrial ? [purchaseCount(module.id, "trials", now)] : []), ...(converts ? [purchaseCount(module.id, "trialConversions", now)] : [])]);
  purchaseStore(db).setIn(tx, record);
  if (fallbackUntil !== null && fallbackUntil.getTime() !== purchase?.fallbackUntil?.getTime()) auditFallback(tx, deps, { id: purchaseId, moduleId: module.id, owner: buyer.owner, fallbackUntil: purchase?.fallbackUntil ?? null }, fallbackUntil, now, actor);
  rememberCustomer(tx, deps, buyer.owner, record.stripe.customerId, business?.stripeCustomerId ?? null);
  auditLog(db).record(
    tx,
    actor,
    {
      action: completes ? "module.purchase.completed" : purchase ? "module.purchase.updated" : "module.purchase.started",
      target: purchaseId,
      details: { moduleId: module.id, owner: buyer.owner, model: "subscription", status, quantity },
      emits: completes ? [outboundEvent("module.purchase.completed", [{ kind: "publisher", id: module.publisherId }], { moduleId: module.id, purchaseId, amount: record.amount, currency: record.currency })] : [],
    },
    now,
  );
  return { outcome: "applied", subject };
}

/** A purchase's identity: its id, the module and its publisher, who owns it and who bought it. */
const whoBoughtWhat = (purchaseId: string, module: { id: string; publisherId: string }, buyer: Buyer) => ({ id: purchaseId, moduleId: module.id, publisherId: module.publisherId, owner: buyer.owner, buyerUid: buyer.buyerUid });

/** The buyer's Stripe customer, for their Billing Portal: the user's own, or the business's when it has none yet. */
function rememberCustomer(tx: Transaction, deps: Deps, owner: PurchaseOwner, customerId: string | null, businessCustomer: string | null) {
  if (!customerId) return;
  if (owner.kind === "user") userStore(deps.db).setStripeCustomerIn(tx, owner.id, customerId);
  else if (businessCustomer === null) businessStore(deps.db).setStripeCustomer(tx, owner.id, customerId);
}
