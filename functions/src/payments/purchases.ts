import { z } from "zod";
import { findUser } from "../accounts/identity";
import { purchaseStore, type PurchaseRecord } from "../accounts/purchase-store";
import { auditLog, operatorOf } from "../core/audit-log";
import { ApiError } from "../core/errors";
import type { Logger } from "../core/logger";
import { callStripe, stripeClient, type StripeSettings } from "../core/stripe";
import { documentId } from "../core/schemas";
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

const refundInput = z.object({ purchaseId: documentId, amount: z.number().int().positive().optional() });

/**
 * `purchases refund <purchaseId> [--amount <minor units>]`: refunds its payment (a subscription's
 * latest paid invoice is not known here: its payment intent is asked of Stripe), reversing the
 * transfer to the publisher and the marketplace's fee in proportion. The same refund asked again
 * within 24 hours (Stripe's idempotency window) is made once.
 */
export async function refundPurchase(deps: Pick<OperatorDeps, "db" | "clock" | "actor"> & { stripe: StripeSettings; logger: Logger; timeoutMs: number }, input: z.input<typeof refundInput>) {
  const { purchaseId, amount } = parseInput(refundInput, input);
  const purchase = await purchaseStore(deps.db).get(purchaseId);
  if (!purchase) throw new ApiError("not_found", `No purchase '${purchaseId}'.`);
  const stripe = await stripeClient(deps.stripe, deps.timeoutMs);
  let paymentIntent = purchase.stripe.paymentIntentId;
  if (!paymentIntent && purchase.stripe.subscriptionId) {
    const subscriptionId = purchase.stripe.subscriptionId;
    const invoices = await callStripe(deps.logger, "invoices.list", () => stripe.invoices.list({ subscription: subscriptionId, status: "paid", limit: 1 }));
    const latest = invoices.data[0] as unknown as { payment_intent?: string | { id: string } | null } | undefined;
    paymentIntent = typeof latest?.payment_intent === "string" ? latest.payment_intent : (latest?.payment_intent?.id ?? null);
  }
  if (!paymentIntent) throw new ApiError("not_found", `Purchase '${purchaseId}' has no payment to refund yet.`);
  const target = paymentIntent;
  const refund = await callStripe(deps.logger, "refunds.create", () =>
    stripe.refunds.create({ payment_intent: target, reverse_transfer: true, refund_application_fee: true, ...(amount ? { amount } : {}), metadata: { purchaseId } }, { idempotencyKey: `refund-${purchaseId}-${amount ?? "all"}` }),
  );
  await auditLog(deps.db).commit(operatorOf(deps), { action: "module.purchase.refund", target: purchaseId, details: { refundId: refund.id, paymentIntent: target, amount: refund.amount } }, deps.clock(), () => undefined);
  return { purchaseId, refundId: refund.id, paymentIntent: target, amount: refund.amount, currency: refund.currency, status: refund.status };
}
