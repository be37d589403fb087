import { z } from "zod";

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
