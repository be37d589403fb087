import type { z } from "zod";
import { outboundEvent } from "../core/event-types";
import { effectiveSubscriptionStatus } from "../access/rules";
import { businessStore } from "../accounts/business-store";
import { memberStore } from "../accounts/member-store";
import { auditLog, operatorOf } from "../core/audit-log";
import { toIso } from "../core/documents";
import { ApiError } from "../core/errors";
import { parseInput } from "../core/validation";
import type { Deps, OperatorDeps } from "../deps";
import { subscriptionInput, type SubscriptionStatusView } from "./schemas";
import { subscriptionStore, type SubscriptionRecord } from "../accounts/subscription-store";
import { withinDeadline } from "../core/deadline";

/**
 * A business's subscription with its effective status, for a member of that business. A caller
 * who is not a member learns nothing, not even that the business exists.
 */
export async function getSubscriptionStatus({ db, clock }: Deps, uid: string, businessId: string): Promise<SubscriptionStatusView> {
  const businesses = businessStore(db);
  const subscriptions = subscriptionStore(db);
  const members = memberStore(db);
  const [businessSnapshot, subscriptionSnapshot, memberSnapshot] = await withinDeadline("Firestore", db.getAll(businesses.ref(businessId), subscriptions.ref(businessId), members.ref(businessId, uid)));
  const member = members.read(memberSnapshot);
  if (!businesses.read(businessSnapshot) || !member || member.suspended) {
    throw new ApiError("business_not_found", `No business '${businessId}' of which you are a member.`);
  }
  return subscriptionView(businessId, subscriptions.read(subscriptionSnapshot), clock());
}

/** A business's subscription as members see it (§4), with its effective status; "none" without one. */
export function subscriptionView(businessId: string, subscription: SubscriptionRecord | null, now: Date): SubscriptionStatusView {
  if (!subscription) {
    return { businessId, status: "none", plan: null, seats: null, currentPeriodEnd: null, cancelAtPeriodEnd: false, entitlements: [] };
  }
  return { businessId, ...view(subscription), status: effectiveSubscriptionStatus(subscription, now) };
}

/** Operators: writes a business's whole subscription document (what billing would write). */
export async function setSubscription(deps: OperatorDeps, input: z.input<typeof subscriptionInput>) {
  const { db, clock } = deps;
  const { business: businessId, periodEnd, ...terms } = parseInput(subscriptionInput, input);
  const businesses = businessStore(db);
  if (!businesses.read(await businesses.ref(businessId).get())) {
    throw new ApiError("business_not_found", `No business '${businessId}'; create it first.`);
  }
  const subscriptions = subscriptionStore(db);
  // A manual fix of a Stripe-managed subscription keeps its Stripe fields, so events stay in order.
  const { stripe } = (await subscriptions.getMany([businessId]))[0] ?? { stripe: null };
  const subscription: SubscriptionRecord = { ...terms, currentPeriodEnd: periodEnd, seats: terms.seats ?? null, entitlements: [...new Set(terms.entitlements)], stripe };
  const details = { status: subscription.status, plan: subscription.plan, seats: subscription.seats, entitlements: subscription.entitlements };
  const emits = [
    outboundEvent("business.subscription.updated", [{ kind: "business", id: businessId }], {
      businessId,
      status: subscription.status,
      plan: subscription.plan,
      seats: subscription.seats,
      currentPeriodEnd: subscription.currentPeriodEnd.toISOString(),
      path: `/subscriptions/${businessId}`,
    }),
  ];
  await auditLog(db).commit(operatorOf(deps), { action: "subscription.set", target: businessId, details, emits }, clock(), (batch) => subscriptions.setIn(batch, businessId, subscription));
  return {
    businessId,
    ...view(subscription),
    status: subscription.status,
    effectiveStatus: effectiveSubscriptionStatus(subscription, clock()),
    ...(stripe
      ? {
          stripeSubscriptionId: stripe.subscriptionId,
          notice: `Stripe manages this subscription (${stripe.subscriptionId}): its next event for this business replaces this change. Make lasting changes in Stripe.`,
        }
      : {}),
  };
}

function view(subscription: SubscriptionRecord) {
  return {
    plan: subscription.plan,
    seats: subscription.seats,
    currentPeriodEnd: toIso(subscription.currentPeriodEnd),
    cancelAtPeriodEnd: subscription.cancelAtPeriodEnd,
    entitlements: subscription.entitlements,
  };
}
