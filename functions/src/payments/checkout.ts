import type { z } from "zod";
import { moduleNotFound } from "../access/visibility";
import { purchaseGrants } from "../access/rules";
import { memberStore } from "../accounts/member-store";
import { purchaseStore, type PurchaseOwner } from "../accounts/purchase-store";
import { userStore } from "../accounts/user-store";
import { ApiError, invalidRequest } from "../core/errors";
import { callStripe, stripeClient } from "../core/stripe";
import type { Deps } from "../deps";
import { siteUrl } from "../businesses/invitations";
import { readBusiness, requireAdmin } from "../businesses/membership";
import { moduleStore } from "../marketplace/module-store";
import { payoutAccountStore } from "./payout-account-store";
import { feeOf } from "./rules";
import type { checkoutInputSchema } from "./schemas";

/**
 * Buying a module (contract §20): a Stripe Checkout Session whose charge goes to the publisher's
 * connected account less the marketplace's fee (a destination charge). The purchase itself
 * arrives through the webhook once paid (fulfilment.ts).
 */

/** POST /modules/:id/checkout. */
export async function startModuleCheckout(deps: Deps, caller: { uid: string; email: string | null }, moduleId: string, input: z.output<typeof checkoutInputSchema>) {
  const { db, config, logger, clock } = deps;
  const now = clock();
  const module = await moduleStore(db).getModule(moduleId);
  // A business's private module (§26) is not for sale: to anyone outside it, it does not exist.
  if (!module?.listed || module.businessId !== null) throw moduleNotFound(moduleId);
  const price = module.price;
  if (!price) throw new ApiError("not_for_sale", `Module '${moduleId}' is free: there is nothing to buy.`);
  const account = await payoutAccountStore(db).get(module.publisherId);
  if (!account?.chargesEnabled) throw new ApiError("not_for_sale", `Module '${moduleId}' cannot be bought right now: its publisher cannot take payments yet.`);

  let owner: PurchaseOwner = { kind: "user", id: caller.uid };
  let customer: string | null;
  let owners: string[] = [];
  if (input.businessId !== undefined) {
    const member = requireAdmin(await readBusiness(deps, null, input.businessId, caller.uid), caller, input.businessId, "buy modules for it");
    if (!price.perSeat) throw invalidRequest(`Module '${moduleId}' is sold to people, not per seat to businesses.`, [{ path: "businessId", message: "This module is not sold per seat." }]);
    if (input.seats === undefined) throw invalidRequest("How many seats? A business buys a module per seat.", [{ path: "seats", message: "Required with businessId." }]);
    owner = { kind: "business", id: input.businessId };
    owners = (await memberStore(db).owners(null, input.businessId, 100)).map((owner) => owner.uid);
    customer = member.stripeCustomerId ?? null;
  } else {
    if (input.seats !== undefined) throw invalidRequest("Seats are bought for a business: send businessId too.", [{ path: "seats", message: "Only with businessId." }]);
    customer = (await userStore(db).get(caller.uid))?.stripeCustomerId ?? null;
  }

  const earlier = await purchaseStore(db).ofOwnerAndModule(owner, moduleId);
  if (earlier.some((purchase) => purchaseGrants(purchase, now))) {
    throw new ApiError("already_owned", owner.kind === "business" ? `Business '${owner.id}' already owns '${moduleId}': change its seats in the billing portal.` : `You already own '${moduleId}'.`);
  }
  const trialDays = price.model === "subscription" && price.trialDays > 0 && earlier.length === 0 && !(await hadModule(deps, [caller.uid, ...owners], moduleId)) ? price.trialDays : 0;
  const quantity = input.seats ?? 1;
  const metadata = { moduleId, buyerUid: caller.uid, ...(owner.kind === "business" ? { businessId: owner.id } : {}), quantity: String(quantity) };
  const destination = account.accountId;
  const page = `${siteUrl(config.publicBaseUrl)}/modules/${encodeURIComponent(moduleId)}`;
  const stripe = await stripeClient(config.billing, config.deadlines.callMs);
  const session = await callStripe(logger, "checkout.sessions.create", () =>
    stripe.checkout.sessions.create({
      mode: price.model === "one_time" ? "payment" : "subscription",
      line_items: [{ price: price.stripePriceId, quantity }],
      metadata,
      client_reference_id: caller.uid,
      ...(price.model === "one_time"
        ? {
            payment_intent_data: { application_fee_amount: feeOf(price.amount, quantity, config.payments.feeBasisPoints), transfer_data: { destination }, metadata },
            ...(customer ? {} : { customer_creation: "always" as const }),
          }
        : {
            subscription_data: {
              application_fee_percent: config.payments.feeBasisPoints / 100,
              transfer_data: { destination },
              metadata,
              ...(trialDays > 0 ? { trial_period_days: trialDays } : {}),
            },
          }),
      ...(customer ? { customer } : caller.email ? { customer_email: caller.email } : {}),
      success_url: `${page}?checkout=success`,
      cancel_url: `${page}?checkout=canceled`,
    }),
  );
  if (!session.url) throw new ApiError("billing_unavailable", "The billing provider returned no checkout page.");
  return { url: session.url };
}

/**
 * Whether any of these people had a trial or a purchase of the module (§20: a trial once per
 * person and module): bought by them, or owned by them or by a business they own.
 */
async function hadModule(deps: Deps, people: string[], moduleId: string): Promise<boolean> {
  const purchases = purchaseStore(deps.db);
  if ((await purchases.ofBuyersAndModule(people, moduleId)).length > 0) return true;
  // A person's own purchases were bought by them, so the query above found them; what is left is what their businesses bought.
  const owned = (await Promise.all(people.map((uid) => memberStore(deps.db).ofUser(uid))))
    .flat()
    .flatMap(({ businessId, member }): PurchaseOwner[] => (member.role === "owner" ? [{ kind: "business", id: businessId }] : []));
  return owned.length > 0 && (await purchases.ofOwners(owned)).some((purchase) => purchase.moduleId === moduleId);
}

/** POST /users/me/billing/portal: the Billing Portal of the caller's own Stripe customer (their module purchases). */
export async function openUserBillingPortal(deps: Deps, uid: string) {
  const { db, config, logger } = deps;
  const customer = (await userStore(db).get(uid))?.stripeCustomerId;
  if (!customer) throw new ApiError("no_billing_account", "You have no billing account yet: it is made with your first purchase.");
  const stripe = await stripeClient(config.billing, config.deadlines.callMs);
  const session = await callStripe(logger, "billingPortal.sessions.create", () => stripe.billingPortal.sessions.create({ customer, return_url: `${siteUrl(config.publicBaseUrl)}/account` }));
  return { url: session.url };
}
