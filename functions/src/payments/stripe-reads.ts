import { ApiError } from "../core/errors";
import { callStripe, stripeClient } from "../core/stripe";
import type { Deps } from "../deps";
import { applicationFeeObject, paymentIntentObject, priceObject, promiseOf, stripeSubscriptionObject, type StripeSubscriptionObject } from "./stripe-objects";

/** Reads an object from Stripe: null when Stripe has none of that id; 502 when it cannot be reached or answers what cannot be read. */
async function readFromStripe<T>(deps: Pick<Deps, "config" | "logger">, what: string, id: string, schema: { safeParse(value: unknown): { success: true; data: T } | { success: false; error: { issues: unknown[] } } }, call: (stripe: Awaited<ReturnType<typeof stripeClient>>) => Promise<unknown>): Promise<T | null> {
  const stripe = await stripeClient(deps.config.billing, deps.config.deadlines.callMs);
  const answer = await callStripe(deps.logger, what, async () => {
    try {
      return await call(stripe);
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode === 404) return null;
      throw error;
    }
  });
  if (answer === null) return null;
  const parsed = schema.safeParse(answer);
  if (!parsed.success) {
    deps.logger.error(`stripe answered ${what} this service cannot read`, { id, issues: parsed.error.issues.slice(0, 5) });
    throw new ApiError("billing_unavailable", "The billing provider answered an object this service cannot read; the event will be retried.");
  }
  return parsed.data;
}

/** The application fee Stripe took on a payment (§20: the ledger holds Stripe's figures), or null when Stripe has no such payment intent. */
export async function paymentIntentFee(deps: Pick<Deps, "config" | "logger">, paymentIntentId: string): Promise<number | null> {
  const intent = await readFromStripe(deps, "paymentIntents.retrieve", paymentIntentId, paymentIntentObject, (stripe) => stripe.paymentIntents.retrieve(paymentIntentId));
  return intent === null ? null : (intent.application_fee_amount ?? 0);
}

/** How much of an application fee Stripe has refunded so far (its refunds only grow). */
export async function applicationFeeRefunded(deps: Pick<Deps, "config" | "logger">, feeId: string): Promise<number | null> {
  const fee = await readFromStripe(deps, "applicationFees.retrieve", feeId, applicationFeeObject, (stripe) => stripe.applicationFees.retrieve(feeId));
  return fee?.amount_refunded ?? null;
}

/**
 * A module subscription as Stripe has it now (§20): its events are prompts, and what is applied
 * is Stripe's answer, so neither their order (those of one second included) nor their repetition
 * changes the result. Null when Stripe has no subscription of that id.
 */
export async function currentSubscription(deps: Pick<Deps, "config" | "logger">, subscriptionId: string): Promise<StripeSubscriptionObject | null> {
  return readFromStripe(deps, "subscriptions.retrieve", subscriptionId, stripeSubscriptionObject, (stripe) => stripe.subscriptions.retrieve(subscriptionId));
}

/** What a price promises after a subscription ends (§27), read from Stripe; null when Stripe has no price of that id. */
export async function pricePromise(deps: Pick<Deps, "config" | "logger">, priceId: string): Promise<"none" | "perpetual" | null> {
  const price = await readFromStripe(deps, "prices.retrieve", priceId, priceObject, (stripe) => stripe.prices.retrieve(priceId));
  return price === null ? null : promiseOf(price);
}
