import { DAY_MS } from "../core/time";

/**
 * The entitlement rules of the contract (§3), as pure functions of their inputs and the time.
 */

/** What a business subscription's stored status may be (§3). */
export const SUBSCRIPTION_STATUSES = ["active", "trialing", "past_due", "canceled", "expired"] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

/** A member's role in a business. */
export const BUSINESS_ROLES = ["owner", "admin", "member"] as const;
export type BusinessRole = (typeof BUSINESS_ROLES)[number];

/** How long a lapsed subscription keeps working after its period ends. */
export const GRACE_PERIOD_MS = 3 * DAY_MS;

const LIVE_STATUSES: ReadonlySet<SubscriptionStatus> = new Set(["active", "trialing", "past_due"]);

export interface SubscriptionTerms {
  status: SubscriptionStatus;
  currentPeriodEnd: Date;
  entitlements: string[];
}

/**
 * The stored status, except that a live (active, trialing, past-due) subscription whose period
 * ended more than the grace period ago is expired.
 */
export function effectiveSubscriptionStatus(
  subscription: Pick<SubscriptionTerms, "status" | "currentPeriodEnd">,
  now: Date,
): SubscriptionStatus {
  const { status, currentPeriodEnd } = subscription;
  if (LIVE_STATUSES.has(status) && now.getTime() - currentPeriodEnd.getTime() > GRACE_PERIOD_MS) {
    return "expired";
  }
  return status;
}

export function grantsEntitlements(status: SubscriptionStatus): boolean {
  return LIVE_STATUSES.has(status);
}

export interface EntitlementGrant {
  key: string;
  source: "direct" | "subscription";
  businessId?: string;
}

export interface EntitlementSources {
  /** `users/{uid}.entitlements`. */
  direct: string[];
  /**
   * The businesses the user is a member of, with their subscription if they have one, and whether
   * its entitlements reach this member (`drawsOnSubscription`).
   */
  memberships: { businessId: string; subscription: SubscriptionTerms | null; drawsOnSubscription: boolean }[];
}

/** A member holding a seat of a business (§17), and since when. */
export interface SeatHolder {
  uid: string;
  assignedAt: Date;
}

/**
 * The seat holders beyond a paid quantity (§17): when Stripe lowers the quantity below the seats
 * in use, the most recently assigned seats wait (newest `assignedAt` first, then uid) until
 * someone frees one. Nothing is taken away; they simply draw nothing meanwhile.
 */
export function heldSeats(holders: readonly SeatHolder[], paidSeats: number | null): Set<string> {
  if (paidSeats === null || holders.length <= paidSeats) return new Set();
  const newestFirst = [...holders].sort((a, b) => b.assignedAt.getTime() - a.assignedAt.getTime() || (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0));
  return new Set(newestFirst.slice(0, holders.length - paidSeats).map((holder) => holder.uid));
}

/**
 * Whether a business's subscription reaches a member: always when it counts no seats, else only
 * through a seat that is not held back (heldSeats).
 */
export function drawsOnSubscription(uid: string, holders: readonly SeatHolder[], paidSeats: number | null): boolean {
  if (paidSeats === null) return true;
  return holders.some((holder) => holder.uid === uid) && !heldSeats(holders, paidSeats).has(uid);
}

/**
 * Every grant a user holds: each direct entitlement, and each entitlement of each business
 * subscription whose effective status is live. A key held twice is listed once per source.
 */
export function effectiveEntitlements(sources: EntitlementSources, now: Date): EntitlementGrant[] {
  const grants: EntitlementGrant[] = unique(sources.direct).map((key) => ({ key, source: "direct" }));
  for (const { businessId, subscription, drawsOnSubscription } of sources.memberships) {
    if (!subscription || !subscriptionGrants(subscription, drawsOnSubscription, now)) continue;
    for (const key of unique(subscription.entitlements)) {
      grants.push({ key, source: "subscription", businessId });
    }
  }
  return grants;
}

/** Whether a business's subscription grants a member its entitlements now: it is live, and it reaches them. */
export function subscriptionGrants(subscription: Pick<SubscriptionTerms, "status" | "currentPeriodEnd"> | null, drawsOnSubscription: boolean, now: Date): boolean {
  return subscription !== null && drawsOnSubscription && grantsEntitlements(effectiveSubscriptionStatus(subscription, now));
}

export function entitlementKeys(grants: EntitlementGrant[]): Set<string> {
  return new Set(grants.map((grant) => grant.key));
}

/** A module is usable when it is free (no entitlement) or the user holds its entitlement. */
export function isModuleUsable(module: { entitlement?: string | null }, keys: ReadonlySet<string>): boolean {
  return !module.entitlement || keys.has(module.entitlement);
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
