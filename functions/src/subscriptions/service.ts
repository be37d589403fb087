import type { Firestore } from "firebase-admin/firestore";
import { effectiveSubscriptionStatus } from "../access/rules";
import { businessDocument, COLLECTIONS, readDocument, subscriptionDocument, toIso } from "../core/documents";
import { ApiError } from "../core/errors";
import type { SubscriptionStatusView } from "./schemas";

/**
 * A business's subscription with its effective status, for a member of that business. A caller
 * who is not a member learns nothing, not even that the business exists.
 */
export async function getSubscriptionStatus(
  db: Firestore,
  uid: string,
  businessId: string,
  now: Date,
): Promise<SubscriptionStatusView> {
  const [businessSnapshot, subscriptionSnapshot] = await db.getAll(
    db.collection(COLLECTIONS.businesses).doc(businessId),
    db.collection(COLLECTIONS.subscriptions).doc(businessId),
  );
  const business = readDocument(businessDocument, businessSnapshot);
  if (!business || !business.memberIds.includes(uid)) {
    throw new ApiError("business_not_found", `No business '${businessId}' of which you are a member.`);
  }
  const subscription = readDocument(subscriptionDocument, subscriptionSnapshot);
  if (!subscription) {
    return {
      businessId,
      status: "none",
      plan: null,
      seats: null,
      currentPeriodEnd: null,
      cancelAtPeriodEnd: false,
      entitlements: [],
    };
  }
  return {
    businessId,
    status: effectiveSubscriptionStatus(
      { status: subscription.status, currentPeriodEnd: subscription.currentPeriodEnd.toDate() },
      now,
    ),
    plan: subscription.plan,
    seats: subscription.seats ?? null,
    currentPeriodEnd: toIso(subscription.currentPeriodEnd),
    cancelAtPeriodEnd: subscription.cancelAtPeriodEnd ?? false,
    entitlements: subscription.entitlements,
  };
}
