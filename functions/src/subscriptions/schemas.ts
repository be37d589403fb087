import { z } from "zod";
import { entitlementKey } from "../core/documents";
import { documentId, isoDateTime } from "../core/schemas";
import { SUBSCRIPTION_STATUSES } from "../access/rules";

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

const rfc3339 = z
  .string()
  .refine(
    (value) => z.iso.datetime({ offset: true }).safeParse(value).success || z.iso.date().safeParse(value).success,
    "must be an RFC 3339 date, e.g. 2026-12-31 or 2026-12-31T00:00:00Z",
  )
  .transform((value) => new Date(value.length === 10 ? `${value}T00:00:00Z` : value));

/** Operators' `subscription set`: the whole subscription of a business. */
export const subscriptionInput = z.object({
  business: documentId,
  status: z.enum(SUBSCRIPTION_STATUSES),
  plan: z.string().trim().min(1, "must not be empty").max(100),
  periodEnd: rfc3339,
  seats: z
    .preprocess(
      (value) => (typeof value === "string" && /^\d+$/.test(value) ? Number(value) : value),
      z.number({ error: "must be a whole number, e.g. 5" }).int("must be a whole number, e.g. 5").min(0),
    )
    .optional(),
  entitlements: z.array(entitlementKey).default([]),
  cancelAtPeriodEnd: z.boolean().default(false),
});
