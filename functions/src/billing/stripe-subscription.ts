import type { z } from "zod";
import { ENTITLEMENT_KEY } from "../core/documents";
import { documentId } from "../core/schemas";
import { periodEndOf, SUBSCRIPTION_STATUS, type stripePrice, type StripeSubscriptionObject } from "../payments/stripe-objects";
import type { SubscriptionRecord } from "../accounts/subscription-store";
import { grantsEntitlements, type SubscriptionStatus } from "../access/rules";

/**
 * What a Stripe subscription object means for `subscriptions/{businessId}` (contract §11), as
 * pure functions. Stripe's objects are read loosely: only the fields used here are checked, so a
 * newer API version that adds fields changes nothing.
 */

export const HANDLED_EVENT_TYPES = ["customer.subscription.created", "customer.subscription.updated", "customer.subscription.deleted"] as const;

export type SubscriptionFromStripe =
  | { kind: "write"; businessId: string; businessName: string; subscription: Omit<SubscriptionRecord, "stripe">; droppedEntitlements: string[] }
  | { kind: "skip"; reason: string };

/** The subscription document a Stripe subscription maps to, or why it writes none. */
export function subscriptionFromStripe(object: StripeSubscriptionObject): SubscriptionFromStripe {
  const businessId = object.metadata?.businessId;
  if (!businessId) return { kind: "skip", reason: "the subscription has no metadata.businessId" };
  if (!documentId.safeParse(businessId).success) return { kind: "skip", reason: `metadata.businessId '${businessId}' is not a valid id` };
  const status = SUBSCRIPTION_STATUS.get(object.status);
  if (status === undefined) return { kind: "skip", reason: `status '${object.status}' is not one this service knows` };
  if (status === "not_written") return { kind: "skip", reason: `status '${object.status}' is not written` };
  const [item] = object.items.data;
  const periodEnd = periodEndOf(object);
  if (periodEnd == null) return { kind: "skip", reason: "neither the item nor the subscription has current_period_end" };
  const { valid, invalid } = entitlementsOf(item.price);
  return {
    kind: "write",
    businessId,
    businessName: typeof object.customer === "object" && object.customer.name ? object.customer.name : businessId,
    subscription: {
      status,
      plan: item.price.lookup_key || item.price.id,
      seats: item.quantity ?? null,
      currentPeriodEnd: new Date(periodEnd * 1000),
      cancelAtPeriodEnd: object.cancel_at_period_end ?? false,
      entitlements: valid,
    },
    droppedEntitlements: invalid,
  };
}

/** The comma-separated `entitlements` metadata of the price, else of its product when expanded. */
function entitlementsOf(price: z.output<typeof stripePrice>): { valid: string[]; invalid: string[] } {
  const listed = price.metadata?.entitlements ?? (typeof price.product === "object" ? price.product?.metadata?.entitlements : undefined) ?? "";
  const keys = [...new Set(listed.split(",").map((key) => key.trim()).filter(Boolean))];
  return { valid: keys.filter((key) => ENTITLEMENT_KEY.test(key)), invalid: keys.filter((key) => !ENTITLEMENT_KEY.test(key)) };
}

/**
 * Whether an event writes the business's subscription:
 * - `stale` when the stored one was written by a later event (Stripe does not deliver in order);
 * - `superseded` when the stored one is another Stripe subscription that is still live and this
 *   one ends (the old subscription of a customer who moved to a new one);
 * - else `applied`.
 */
export function stripeWriteDecision(
  stored: Pick<SubscriptionRecord, "status" | "stripe"> | null,
  incoming: { subscriptionId: string; status: SubscriptionStatus; eventCreated: Date },
): "applied" | "stale" | "superseded" {
  if (!stored?.stripe) return "applied";
  if (incoming.eventCreated < stored.stripe.eventCreated) return "stale";
  if (stored.stripe.subscriptionId !== incoming.subscriptionId && grantsEntitlements(stored.status) && !grantsEntitlements(incoming.status)) return "superseded";
  return "applied";
}
