import { ApiError } from "../core/errors";
import { callStripe, stripeClient } from "../core/stripe";
import type { Deps } from "../deps";
import { stripeSubscriptionObject, type StripeSubscriptionObject } from "./stripe-objects";

/**
 * A module subscription as Stripe has it now (§20): its events are prompts, and what is applied
 * is Stripe's answer, so neither their order (those of one second included) nor their repetition
 * changes the result. Null when Stripe has no subscription of that id.
 */
export async function currentSubscription(deps: Pick<Deps, "config" | "logger">, subscriptionId: string): Promise<StripeSubscriptionObject | null> {
  const { config, logger } = deps;
  const stripe = await stripeClient(config.billing, config.deadlines.callMs);
  const answer = await callStripe(logger, "subscriptions.retrieve", async () => {
    try {
      return await stripe.subscriptions.retrieve(subscriptionId);
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode === 404) return null;
      throw error;
    }
  });
  if (answer === null) return null;
  const parsed = stripeSubscriptionObject.safeParse(answer);
  if (!parsed.success) {
    logger.error("stripe answered a subscription this service cannot read", { subscriptionId, issues: parsed.error.issues.slice(0, 5) });
    throw new ApiError("billing_unavailable", "The billing provider answered a subscription this service cannot read; the event will be retried.");
  }
  return parsed.data;
}
