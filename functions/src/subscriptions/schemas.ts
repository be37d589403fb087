import { z } from "zod";
import { SUBSCRIPTION_STATUSES } from "../core/documents";
import { documentId, isoDateTime } from "../core/schemas";

export const subscriptionParamsSchema = z.strictObject({ businessId: documentId });

export const subscriptionStatusSchema = z
  .object({
    businessId: z.string(),
    status: z.enum([...SUBSCRIPTION_STATUSES, "none"]).meta({
      description: "Effective status: a live subscription more than 3 days past its period end is 'expired'; 'none' when the business has no subscription.",
    }),
    plan: z.string().nullable(),
    seats: z.number().int().nullable(),
    currentPeriodEnd: isoDateTime.nullable(),
    cancelAtPeriodEnd: z.boolean(),
    entitlements: z.array(z.string()).meta({ description: "What the plan includes; they apply while the status is active, trialing or past_due." }),
  })
  .meta({ id: "SubscriptionStatus" });

export type SubscriptionStatusView = z.output<typeof subscriptionStatusSchema>;
