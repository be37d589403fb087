import { z } from "zod";
import { documentId, isoDateTime } from "../core/schemas";
import { modulePriceSchema, moduleIdSchema } from "../marketplace/schemas";

/** The request and answer shapes of paid modules (contract §20). */

export const pricingInputSchema = z
  .strictObject({
    model: z.enum(["one_time", "subscription"]),
    amount: z.number().int().min(100).max(1_000_000).meta({ description: "In the currency's minor unit: 100..1,000,000." }),
    currency: z.string().regex(/^[a-z]{3}$/, "A lowercase ISO 4217 code such as usd.").default("usd"),
    interval: z.enum(["month", "year"]).optional().meta({ description: "Required for a subscription; not for one-time." }),
    trialDays: z.number().int().min(0).max(30).optional().meta({ description: "Subscriptions only: 0..30." }),
    perSeat: z.boolean().optional().meta({ description: "Whether businesses may buy seats (default false)." }),
    fallback: z.enum(["none", "perpetual"]).default("none").meta({ description: "perpetual (subscriptions only, §27): a buyer who paid a year keeps that year's versions and their bug fixes after the subscription ends." }),
  })
  .superRefine((input, context) => {
    if (input.model === "subscription" && input.interval === undefined) context.addIssue({ code: "custom", path: ["interval"], message: "A subscription needs an interval: month or year." });
    if (input.model === "one_time" && input.interval !== undefined) context.addIssue({ code: "custom", path: ["interval"], message: "Only a subscription has an interval." });
    if (input.model === "one_time" && input.trialDays !== undefined) context.addIssue({ code: "custom", path: ["trialDays"], message: "Only a subscription has a trial." });
    if (input.model === "one_time" && input.fallback === "perpetual") context.addIssue({ code: "custom", path: ["fallback"], message: "A one-time purchase is already perpetual: only a subscription takes a perpetual fallback." });
  })
  .meta({ id: "PricingInput" });

export const pricingSchema = modulePriceSchema.extend({ moduleId: z.string(), updatedAt: isoDateTime }).meta({ id: "ModulePricing" });

export const moduleParamsSchema = z.strictObject({ id: moduleIdSchema });

export const payoutAccountSchema = z
  .object({
    accountId: z.string().meta({ description: "The Stripe connected account." }),
    chargesEnabled: z.boolean().meta({ description: "Whether Stripe lets it take charges: modules may be priced and sold." }),
    payoutsEnabled: z.boolean(),
    requirementsDue: z.array(z.string()).meta({ description: "What Stripe still needs (requirements.currently_due)." }),
  })
  .meta({ id: "PayoutAccount" });

export const openedPayoutAccountSchema = payoutAccountSchema.extend({ onboardingUrl: z.string().nullable().meta({ description: "Stripe's onboarding page for the publisher; single use, short-lived; null in a replay under an Idempotency-Key." }) }).meta({ id: "OpenedPayoutAccount" });

export const checkoutInputSchema = z
  .strictObject({
    businessId: documentId.optional().meta({ description: "Buy for this business (its owner or admin; perSeat modules only)." }),
    seats: z.number().int().min(1).max(10_000).optional().meta({ description: "Seats for the business: 1..10,000; only with businessId." }),
  })
  .meta({ id: "ModuleCheckoutInput" });

const figures = {
  sales: z.number().int().meta({ description: "Charges in the range (a paid invoice of a module subscription is one); refunded ones still count." }),
  gross: z.number().int().meta({ description: "Their amounts, in the currency's minor unit." }),
  fees: z.number().int().meta({ description: "The marketplace's fees kept after refunds." }),
  refunds: z.number().int().meta({ description: "Amounts refunded since, and lost disputes' amounts." }),
  net: z.number().int().meta({ description: "gross − fees − refunds: what the publisher keeps." }),
};

export const earningsSchema = z
  .object({
    from: z.string(),
    to: z.string(),
    totals: z.array(z.object({ currency: z.string(), ...figures })),
    modules: z.array(z.object({ moduleId: z.string(), currency: z.string(), ...figures })),
  })
  .meta({ id: "Earnings" });

/** Where to send the buyer's or owner's browser next (billing/ uses it too). */
export const billingRedirectSchema = z.object({ url: z.string().meta({ description: "Where to send the browser: Stripe's page." }) }).meta({ id: "BillingRedirect" });
