import { defineRoute } from "../core/routes";
import type { Deps } from "../deps";
import { statsQuerySchema } from "../publishing/schemas";
import { startModuleCheckout, openUserBillingPortal } from "./checkout";
import { publisherEarnings } from "./earnings";
import { getPayoutAccount, openPayoutAccount } from "./payouts";
import { removeModulePricing, setModulePricing } from "./pricing";
import {
  billingRedirectSchema,
  checkoutInputSchema,
  earningsSchema,
  moduleParamsSchema,
  openedPayoutAccountSchema,
  payoutAccountSchema,
  pricingInputSchema,
  pricingSchema,
} from "./schemas";

const STRIPE_PROBLEMS = ["billing_not_configured", "billing_unavailable"] as const;

/** Paid modules (contract §20): publishers' payouts, prices and earnings; buyers' checkout and billing portal. */
export const paymentRoutes = (deps: Deps) => [
  defineRoute({
    method: "post",
    path: "/developers/payouts/account",
    operationId: "openPayoutAccount",
    summary: "Creates the publisher's Stripe connected account on the first call, and answers a fresh onboarding link every time.",
    tag: "Payments",
    auth: "developer",
    // The onboarding link is single-use and short-lived, a credential for the publisher's Stripe onboarding: never kept for a replay.
    shownOnce: ["onboardingUrl"],
    responses: { 200: { description: "The account, and where to continue onboarding; a replay under an Idempotency-Key answers `onboardingUrl: null` (call again without the key for a fresh link).", schema: openedPayoutAccountSchema } },
    problems: [...STRIPE_PROBLEMS],
    handle: async ({ caller, actor }) => ({ status: 200, body: await openPayoutAccount(deps, caller.developer, actor) }),
  }),
  defineRoute({
    method: "get",
    path: "/developers/payouts",
    operationId: "getPayoutAccount",
    summary: "The publisher's payouts account: whether it may take charges and receive payouts, and what Stripe still needs.",
    tag: "Payments",
    auth: "developer",
    responses: { 200: { description: "The account as Stripe last told it: while it cannot take charges yet, read from Stripe at this call.", schema: payoutAccountSchema } },
    problems: ["payouts_account_not_found"],
    handle: async ({ caller, actor }) => ({ status: 200, body: await getPayoutAccount(deps, caller.developer, actor) }),
  }),
  defineRoute({
    method: "put",
    path: "/developers/modules/:id/pricing",
    operationId: "setModulePricing",
    summary: "Puts the module on sale, or changes its price: a new Stripe Price each time (buyers keep the price they bought at). ID token only.",
    tag: "Payments",
    auth: "developer",
    params: moduleParamsSchema,
    body: pricingInputSchema,
    responses: { 200: { description: "The price now in force.", schema: pricingSchema } },
    problems: ["module_not_found", "not_owner", "trader_declaration_required", "not_a_trader", "payouts_not_ready", ...STRIPE_PROBLEMS],
    handle: async ({ caller, actor, params, body }) => ({ status: 200, body: await setModulePricing(deps, caller.developer, actor, params.id, body) }),
  }),
  defineRoute({
    method: "delete",
    path: "/developers/modules/:id/pricing",
    operationId: "removeModulePricing",
    summary: "Makes the module free from now on; its running module subscriptions cancel at their period end. ID token only.",
    tag: "Payments",
    auth: "developer",
    params: moduleParamsSchema,
    responses: { 204: { description: "Free (also when it was already)." } },
    problems: ["module_not_found", "not_owner", ...STRIPE_PROBLEMS],
    handle: async ({ caller, actor, params }) => {
      await removeModulePricing(deps, caller.developer, actor, params.id);
      return { status: 204 };
    },
  }),
  defineRoute({
    method: "get",
    path: "/developers/earnings",
    operationId: "getEarnings",
    summary: "The publisher's sales, fees, refunds and net per currency and per module over a range of days, from the ledger.",
    tag: "Payments",
    auth: "developer",
    // The same range of days as download statistics (§12), with the same defaults and bound.
    query: statsQuerySchema,
    responses: { 200: { description: "Sums over the sales made in the range, each with what was refunded of it since.", schema: earningsSchema } },
    handle: async ({ caller, query }) => ({ status: 200, body: await publisherEarnings(deps, caller.developer, query) }),
  }),
  defineRoute({
    method: "post",
    path: "/modules/:id/checkout",
    operationId: "startModuleCheckout",
    summary: "A Stripe Checkout page where the caller buys the module, for themselves or seats of a business.",
    description: "The purchase arrives through the Stripe webhook once paid; the module is then usable at the next request.",
    tag: "Payments",
    auth: "user",
    params: moduleParamsSchema,
    body: checkoutInputSchema,
    responses: { 200: { description: "The checkout page.", schema: billingRedirectSchema } },
    problems: ["module_not_found", "business_not_found", "not_business_admin", "not_for_sale", "already_owned", ...STRIPE_PROBLEMS],
    handle: async ({ caller, params, body }) => ({ status: 200, body: await startModuleCheckout(deps, caller, params.id, body) }),
  }),
  defineRoute({
    method: "post",
    path: "/users/me/billing/portal",
    operationId: "openUserBillingPortal",
    summary: "A Stripe Billing Portal page for the caller's own purchases (invoices, cards, module subscriptions).",
    tag: "Payments",
    auth: "user",
    responses: { 200: { description: "The portal page.", schema: billingRedirectSchema } },
    problems: ["no_billing_account", ...STRIPE_PROBLEMS],
    handle: async ({ caller }) => ({ status: 200, body: await openUserBillingPortal(deps, caller.uid) }),
  }),
];
