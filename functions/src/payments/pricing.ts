import type { z } from "zod";
import { moduleNotFound } from "../access/visibility";
import { purchaseGrants } from "../access/rules";
import { assertOwnsModule } from "../access/policy";
import { purchaseStore } from "../accounts/purchase-store";
import type { DeveloperAccount } from "../core/auth";
import { auditLog, type Actor } from "../core/audit-log";
import { catalogChanges, moduleChange } from "../core/catalog-changes";
import { withinDeadline } from "../core/deadline";
import { ApiError, invalidRequest } from "../core/errors";
import { callStripe, stripeClient } from "../core/stripe";
import type { Deps } from "../deps";
import { moduleStore, type ModulePrice, type ModuleRecord } from "../marketplace/module-store";
import { publicPrice } from "../marketplace/price";
import { assertMaySell } from "../traders/service";
import { payoutAccountStore } from "./payout-account-store";
import type { pricingInputSchema } from "./schemas";

/**
 * A module's price (contract §20): one Stripe Product per module, a new Stripe Price on every
 * change (buyers keep the price they bought at), and the module's `price` in the catalog, changed
 * with its audit entry and a catalog change so that every instance lists it at once.
 */


async function ownedModule(deps: Deps, developer: DeveloperAccount, moduleId: string): Promise<ModuleRecord> {
  const module = await moduleStore(deps.db).getModule(moduleId);
  if (!module) throw moduleNotFound(moduleId);
  assertOwnsModule(moduleId, module, developer.id);
  return module;
}

/** Writes the module's price (or null: free) with its audit entry and catalog change. */
async function writePrice(deps: Deps, actor: Actor, moduleId: string, price: ModulePrice | null, stripeProductId: string, action: string): Promise<void> {
  const { db, clock } = deps;
  const modules = moduleStore(db);
  const changes = catalogChanges(db);
  await withinDeadline(
    "Firestore (pricing)",
    db.runTransaction(async (tx) => {
      const module = modules.readModule(await tx.get(modules.moduleRef(moduleId)));
      if (!module) throw moduleNotFound(moduleId);
      modules.setPrice(tx, moduleId, price, stripeProductId);
      changes.record(tx, moduleChange(moduleId));
      auditLog(db).record(tx, actor, { action, target: moduleId, details: { before: publicPrice(module.price), after: publicPrice(price) } }, clock());
    }),
  );
  changes.applied(moduleChange(moduleId));
}

/** PUT /developers/modules/:id/pricing. */
export async function setModulePricing(deps: Deps, developer: DeveloperAccount, actor: Actor, moduleId: string, input: z.output<typeof pricingInputSchema>) {
  const { config, logger, clock } = deps;
  if (!config.payments.currencies.includes(input.currency)) {
    throw invalidRequest(`'${input.currency}' is not a currency of this marketplace.`, [{ path: "currency", message: `One of: ${config.payments.currencies.join(", ")}.` }]);
  }
  const module = await ownedModule(deps, developer, moduleId);
  await assertMaySell(deps, module.publisherId);
  const account = await payoutAccountStore(deps.db).get(module.publisherId);
  if (!account?.chargesEnabled) {
    throw new ApiError("payouts_not_ready", account ? "Stripe does not let this publisher's payouts account take charges yet: finish onboarding (POST /developers/payouts/account)." : "Set up a payouts account first: POST /developers/payouts/account.");
  }
  const stripe = await stripeClient(config.billing, config.deadlines.callMs);
  const productId =
    module.stripeProductId ??
    (await callStripe(logger, "products.create", () => stripe.products.create({ name: module.name, metadata: { moduleId } }, { idempotencyKey: `module-product-${moduleId}` }))).id;
  const subscription = input.model === "subscription";
  const stripePrice = await callStripe(logger, "prices.create", () =>
    stripe.prices.create({
      product: productId,
      unit_amount: input.amount,
      currency: input.currency,
      ...(subscription ? { recurring: { interval: input.interval! } } : {}),
      // The promise travels with the price: buyers keep it whatever the module's price becomes (§27).
      metadata: { moduleId, fallback: subscription ? input.fallback : "none" },
    }),
  );
  const price: ModulePrice = {
    model: input.model,
    amount: input.amount,
    currency: input.currency,
    interval: subscription ? input.interval! : null,
    trialDays: subscription ? (input.trialDays ?? 0) : 0,
    perSeat: input.perSeat ?? false,
    fallback: subscription ? input.fallback : "none",
    stripePriceId: stripePrice.id,
    updatedAt: clock(),
  };
  await writePrice(deps, actor, moduleId, price, productId, "module.pricing.set");
  return { moduleId, ...publicPrice(price)!, updatedAt: price.updatedAt.toISOString() };
}

/**
 * DELETE /developers/modules/:id/pricing: free from now on. Its running module subscriptions are
 * set to cancel at their period end first (each call is idempotent at Stripe), so a failure
 * half-way leaves it priced, and a retry finishes the job.
 */
export async function removeModulePricing(deps: Deps, developer: DeveloperAccount, actor: Actor, moduleId: string): Promise<void> {
  const { config, logger, clock, db } = deps;
  const module = await ownedModule(deps, developer, moduleId);
  if (!module.price || !module.stripeProductId) return;
  const now = clock();
  const running = (await purchaseStore(db).ofModule(moduleId)).filter((purchase) => purchase.model === "subscription" && purchase.stripe.subscriptionId && !purchase.cancelAtPeriodEnd && purchaseGrants(purchase, now));
  if (running.length > 0) {
    const stripe = await stripeClient(config.billing, config.deadlines.callMs);
    for (const purchase of running) {
      await callStripe(logger, "subscriptions.update", () => stripe.subscriptions.update(purchase.stripe.subscriptionId!, { cancel_at_period_end: true }));
    }
  }
  await writePrice(deps, actor, moduleId, null, module.stripeProductId, "module.pricing.removed");
}
