import { randomUUID } from "node:crypto";
import { z } from "zod";
import { findUser } from "../accounts/identity";
import { purchaseStore, type PurchaseRecord } from "../accounts/purchase-store";
import { auditLog, operatorOf } from "../core/audit-log";
import { ApiError, invalidRequest } from "../core/errors";
import type { Logger } from "../core/logger";
import { callStripe, stripeClient, type StripeSettings } from "../core/stripe";
import { documentId } from "../core/schemas";
import { invoiceObject, paymentIntentOf, subscriptionOf } from "./stripe-objects";
import { parseInput } from "../core/validation";
import type { OperatorDeps } from "../deps";

/**
 * Operators: module purchases and refunds (contract §20). A refund is asked of Stripe only; the
 * webhook's `charge.refunded` then records it (ledger, purchase status), exactly as for a refund
 * made in Stripe's dashboard.
 */

const listInput = z.object({ module: documentId.optional(), user: z.string().min(1).optional() });

const row = (purchase: PurchaseRecord) => ({
  id: purchase.id,
  moduleId: purchase.moduleId,
  owner: `${purchase.owner.kind}:${purchase.owner.id}`,
  model: purchase.model,
  status: purchase.status,
  quantity: purchase.quantity,
  amount: purchase.amount,
  currency: purchase.currency,
  fee: purchase.fee,
  currentPeriodEnd: purchase.currentPeriodEnd?.toISOString() ?? null,
  createdAt: purchase.createdAt.toISOString(),
});

/** `purchases list [--module <id>] [--user <email>]`: newest first (the latest 200 without a filter). */
export async function listPurchases({ db, auth }: Pick<OperatorDeps, "db" | "auth">, input: z.input<typeof listInput>) {
  const { module, user } = parseInput(listInput, input);
  const purchases = purchaseStore(db);
  const buyer = user ? await findUser(auth, user) : null;
  const found = buyer ? await purchases.ofBuyer(buyer.uid) : module ? await purchases.ofModule(module) : await purchases.recent(200);
  return found
    .filter((purchase) => !module || purchase.moduleId === module)
    .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())
    .map(row);
}

const refundInput = z.object({
  purchaseId: documentId,
  amount: z.number().int().positive().optional(),
  invoice: z.string().regex(/^in_[A-Za-z0-9]+$/, "a Stripe invoice id (in_…)").optional(),
  cancel: z.boolean().optional(),
  idempotencyKey: z.string().regex(/^[\x21-\x7e]{1,200}$/, "1 to 200 printable ASCII characters").optional(),
});

/**
 * `purchases refund <purchaseId> [--amount <minor units>] [--invoice <id>] [--cancel]
 * [--idempotency-key <key>]`: refunds its payment (a subscription's latest paid invoice unless
 * `--invoice` names another), reversing the transfer to the publisher and the marketplace's fee in
 * proportion; `--cancel` also cancels the subscription at once, which ends its access. Each call is
 * a refund of its own: its Stripe idempotency key is new unless `--idempotency-key` repeats one
 * (the answer says which it used), so two refunds of the same amount are two refunds, and a
 * command retried with its key is made once.
 */
export async function refundPurchase(deps: Pick<OperatorDeps, "db" | "clock" | "actor"> & { stripe: StripeSettings; logger: Logger; timeoutMs: number }, input: z.input<typeof refundInput>) {
  const { purchaseId, amount, invoice, cancel, idempotencyKey = `refund-${purchaseId}-${randomUUID()}` } = parseInput(refundInput, input);
  const purchase = await purchaseStore(deps.db).get(purchaseId);
  if (!purchase) throw new ApiError("not_found", `No purchase '${purchaseId}'.`);
  const subscriptionId = purchase.stripe.subscriptionId;
  if ((invoice || cancel) && !subscriptionId) throw invalidRequest(`Purchase '${purchaseId}' is not a subscription: --invoice and --cancel are for subscriptions.`);
  const stripe = await stripeClient(deps.stripe, deps.timeoutMs);
  let paymentIntent = purchase.stripe.paymentIntentId;
  if (subscriptionId) {
    const paid = invoice
      ? await callStripe(deps.logger, "invoices.retrieve", () => stripe.invoices.retrieve(invoice))
      : (await callStripe(deps.logger, "invoices.list", () => stripe.invoices.list({ subscription: subscriptionId, status: "paid", limit: 1 }))).data[0];
    const found = paid === undefined ? null : invoiceObject.safeParse(paid).data ?? null;
    if (invoice && (!found || subscriptionOf(found) !== subscriptionId)) throw invalidRequest(`Invoice '${invoice}' is not one of purchase '${purchaseId}''s subscription.`);
    paymentIntent = found && paymentIntentOf(found);
  }
  if (!paymentIntent) throw new ApiError("not_found", `Purchase '${purchaseId}' has no payment to refund yet.`);
  const target = paymentIntent;
  const refund = await callStripe(deps.logger, "refunds.create", () =>
    stripe.refunds.create({ payment_intent: target, reverse_transfer: true, refund_application_fee: true, ...(amount ? { amount } : {}), metadata: { purchaseId } }, { idempotencyKey }),
  );
  if (cancel && subscriptionId) await callStripe(deps.logger, "subscriptions.cancel", () => stripe.subscriptions.cancel(subscriptionId, {}, { idempotencyKey: `${idempotencyKey}-cancel` }));
  await auditLog(deps.db).commit(operatorOf(deps), { action: "module.purchase.refund", target: purchaseId, details: { refundId: refund.id, paymentIntent: target, amount: refund.amount, ...(cancel ? { canceled: subscriptionId } : {}) } }, deps.clock(), () => undefined);
  return { purchaseId, refundId: refund.id, paymentIntent: target, amount: refund.amount, currency: refund.currency, status: refund.status, idempotencyKey, ...(cancel ? { canceled: subscriptionId } : {}) };
}
