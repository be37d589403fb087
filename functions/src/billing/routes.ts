import { readBodyBytes } from "../core/body";
import { defineRoute } from "../core/routes";
import type { Deps } from "../deps";
import { stripeWebhookResultSchema } from "./schemas";
import { receiveStripeEvent } from "./service";

/** Billing providers' calls (contract §11). */
export const billingRoutes = (deps: Deps) => [
  defineRoute({
    method: "post",
    path: "/billing/stripe/webhook",
    operationId: "receiveStripeEvent",
    summary: "Stripe's webhook: keeps business subscriptions current from customer.subscription.* events.",
    description:
      "Authenticated by the Stripe-Signature header over the raw body (STRIPE_WEBHOOK_SECRET, 5-minute tolerance), not by a token. Answers 200 once the write is durable; replays and out-of-order events change nothing.",
    tag: "Billing",
    auth: "none",
    rawBody: { contentTypes: ["application/json"], description: "The Stripe event, byte for byte as Stripe sent it." },
    responses: { 200: { description: "The event was processed (or deliberately not acted on).", schema: stripeWebhookResultSchema } },
    problems: ["invalid_signature"],
    handle: async ({ req }) => ({
      status: 200,
      body: { received: true, ...(await receiveStripeEvent(deps, await readBodyBytes(req, deps.config.maxJsonBytes), req.get("stripe-signature"))) },
    }),
  }),
];
