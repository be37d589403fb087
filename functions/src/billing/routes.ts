import { readBodyBytes } from "../core/body";
import { defineRoute } from "../core/routes";
import type { Deps } from "../deps";
import { businessParamsSchema } from "../businesses/schemas";
import { billingRedirectSchema } from "../payments/schemas";
import { checkoutInputSchema, stripeWebhookResultSchema } from "./schemas";
import { openBillingPortal, startCheckout } from "./self-serve";
import { receiveStripeEvent } from "./service";

/** Billing providers' calls (contract §11), and owners buying and managing seats (§17). */
export const billingRoutes = (deps: Deps) => [
  defineRoute({
    method: "post",
    path: "/billing/stripe/webhook",
    operationId: "receiveStripeEvent",
    summary: "Stripe's webhook: business subscriptions (customer.subscription.*) and paid modules' purchases, refunds, disputes and payouts accounts.",
    description:
      "Authenticated by the Stripe-Signature header over the raw body (STRIPE_WEBHOOK_SECRET, 5-minute tolerance), not by a token. Answers 200 once the write is durable; replays and out-of-order events change nothing.",
    tag: "Billing",
    auth: "none",
    rawBody: { contentTypes: ["application/json"], description: "The Stripe event, byte for byte as Stripe sent it.", maxBytes: deps.config.maxJsonBytes },
    // Stripe's retries are made safe by the event's id (exactly once, §11), not by a key.
    idempotencyKey: false,
    responses: { 200: { description: "The event was processed (or deliberately not acted on).", schema: stripeWebhookResultSchema } },
    problems: ["invalid_signature"],
    handle: async ({ req }) => ({
      status: 200,
      body: { received: true, ...(await receiveStripeEvent(deps, await readBodyBytes(req, deps.config.maxJsonBytes), req.get("stripe-signature"))) },
    }),
  }),
  defineRoute({
    method: "post",
    path: "/businesses/:businessId/billing/checkout",
    operationId: "startCheckout",
    summary: "A Stripe Checkout page where an owner buys seats of a plan for the business.",
    description: "The subscription arrives through the webhook once paid. 409 subscription_exists while the business's subscription is live: change it in the billing portal.",
    tag: "Billing",
    auth: "user",
    params: businessParamsSchema,
    body: checkoutInputSchema,
    responses: { 200: { description: "The checkout page.", schema: billingRedirectSchema } },
    problems: ["business_not_found", "not_business_admin", "subscription_exists", "billing_not_configured", "billing_unavailable"],
    handle: async ({ caller, params, body }) => ({ status: 200, body: await startCheckout(deps, caller, params.businessId, body) }),
  }),
  defineRoute({
    method: "post",
    path: "/businesses/:businessId/billing/portal",
    operationId: "openBillingPortal",
    summary: "A Stripe Billing Portal page for the business's billing account (owners).",
    tag: "Billing",
    auth: "user",
    params: businessParamsSchema,
    responses: { 200: { description: "The portal page.", schema: billingRedirectSchema } },
    problems: ["business_not_found", "not_business_admin", "no_billing_account", "billing_not_configured", "billing_unavailable"],
    handle: async ({ caller, params }) => ({ status: 200, body: await openBillingPortal(deps, caller, params.businessId) }),
  }),
];
