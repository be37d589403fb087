import type Stripe from "stripe";
import { effectiveSubscriptionStatus, grantsEntitlements } from "../access/rules";
import { memberStore } from "../accounts/member-store";
import { ApiError, invalidRequest } from "../core/errors";
import { callStripe, stripeClient } from "../core/stripe";
import type { Logger } from "../core/logger";
import type { Deps } from "../deps";
import { siteUrl } from "../businesses/invitations";
import { readBusiness, requireOwner, type MemberCaller } from "../businesses/membership";

/**
 * Self-serve billing (§17) through the `stripe` library: a Checkout Session that buys a plan's
 * seats for a business, and a Billing Portal session for its Stripe customer. The subscription
 * itself arrives later through the webhook (service.ts), which also records the customer.
 */

/** The most seats one checkout may buy. */
export const MAX_SEATS = 10_000;

/** A plan's Stripe price: its id as configured, or the active price with that lookup key. */
async function priceOf(stripe: Stripe, logger: Logger, plans: ReadonlyMap<string, string>, plan: string): Promise<string> {
  const configured = plans.get(plan);
  if (!configured) {
    const known = [...plans.keys()];
    throw invalidRequest(`Unknown plan '${plan}'.`, [{ path: "plan", message: known.length ? `One of: ${known.join(", ")}.` : "No plans are configured (BILLING_PLANS)." }]);
  }
  if (configured.startsWith("price_")) return configured;
  const prices = await callStripe(logger, "prices.list", () => stripe.prices.list({ lookup_keys: [configured], active: true, limit: 1 }));
  const price = prices.data[0];
  if (!price) {
    logger.error("BILLING_PLANS names a lookup key no active Stripe price has", { plan, lookupKey: configured });
    throw new ApiError("billing_not_configured", `The plan '${plan}' has no active price at the billing provider.`);
  }
  return price.id;
}

/** POST /businesses/:id/billing/checkout: a Checkout Session for `seats` of `plan`, for owners. */
export async function startCheckout(deps: Deps, caller: MemberCaller & { email: string | null }, businessId: string, input: { plan: string; seats: number }) {
  const { config, logger, clock } = deps;
  const [state, seatsUsed] = await Promise.all([readBusiness(deps, null, businessId, caller.uid), memberStore(deps.db).seatsUsed(businessId)]);
  const { subscription } = state;
  const business = requireOwner(state, caller, businessId, "buy seats");
  if (subscription && grantsEntitlements(effectiveSubscriptionStatus(subscription, clock()))) {
    throw new ApiError("subscription_exists", "This business has a live subscription: change its seats or plan through the billing portal.");
  }
  if (input.seats < seatsUsed) {
    throw invalidRequest(`The business uses ${seatsUsed} seats; buy at least that many.`, [{ path: "seats", message: `At least ${seatsUsed}.` }]);
  }
  const stripe = await stripeClient(config.billing, config.deadlines.callMs);
  const price = await priceOf(stripe, logger, config.billing.plans, input.plan);
  const team = `${siteUrl(config.publicBaseUrl)}/account?business=${encodeURIComponent(businessId)}`;
  const session = await callStripe(logger, "checkout.sessions.create", () =>
    stripe.checkout.sessions.create({
      mode: "subscription",
      line_items: [{ price, quantity: input.seats, adjustable_quantity: { enabled: true, minimum: Math.max(1, seatsUsed), maximum: MAX_SEATS } }],
      subscription_data: { metadata: { businessId } },
      metadata: { businessId },
      client_reference_id: businessId,
      ...(business.stripeCustomerId ? { customer: business.stripeCustomerId } : caller.email ? { customer_email: caller.email } : {}),
      success_url: `${team}&checkout=success`,
      cancel_url: `${team}&checkout=canceled`,
    }),
  );
  if (!session.url) throw new ApiError("billing_unavailable", "The billing provider returned no checkout page.");
  return { url: session.url };
}

/** POST /businesses/:id/billing/portal: the Billing Portal of the business's Stripe customer, for owners. */
export async function openBillingPortal(deps: Deps, caller: MemberCaller, businessId: string) {
  const { config, logger } = deps;
  const business = requireOwner(await readBusiness(deps, null, businessId, caller.uid), caller, businessId, "manage billing");
  if (!business.stripeCustomerId) throw new ApiError("no_billing_account", "This business has no billing account yet: buy seats first.");
  const stripe = await stripeClient(config.billing, config.deadlines.callMs);
  const customer = business.stripeCustomerId;
  const session = await callStripe(logger, "billingPortal.sessions.create", () =>
    stripe.billingPortal.sessions.create({ customer, return_url: `${siteUrl(config.publicBaseUrl)}/account?business=${encodeURIComponent(businessId)}` }),
  );
  return { url: session.url };
}
