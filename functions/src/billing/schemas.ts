import { z } from "zod";
import { oneLine } from "../core/schemas";

export const stripeWebhookResultSchema = z
  .object({
    received: z.literal(true),
    eventId: z.string(),
    outcome: z.enum(["applied", "duplicate", "stale", "superseded", "ignored"]).meta({
      description:
        "applied: the subscription was written; duplicate: this event was processed before; stale: a later event already wrote it; superseded: another live Stripe subscription holds the business; ignored: not an event this service acts on (logged).",
    }),
  })
  .meta({ id: "StripeWebhookResult" });

export const checkoutInputSchema = z.strictObject({
  plan: oneLine(z.string().min(1).max(64)).meta({ description: "A plan of BILLING_PLANS, e.g. team." }),
  seats: z.number().int().min(1).max(10_000).meta({ description: "Seats to buy; at least the seats in use. The buyer may adjust it on the checkout page, not below the seats in use." }),
});

