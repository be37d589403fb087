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

/** Whether a member acts for their business's own publisher (§26): an owner or admin, not suspended. */
export const actsForBusinessPublisher = (member: { role: BusinessRole; suspended: boolean } | null): boolean => member !== null && !member.suspended && member.role !== "member";

/**
 * Whether a business's single sign-on keeps a member out of a request (§22): it enforces a
 * provider and the request's ID token did not come through it. Owners are exempt, so a broken
 * provider can be fixed.
 */
export function ssoBlocks(sso: { providerId: string | null; enforce: boolean } | null, role: BusinessRole, signInProvider: string | null | undefined): boolean {
  return Boolean(sso?.enforce && sso.providerId && role !== "owner" && signInProvider !== sso.providerId);
}

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

/** What a module purchase's stored status may be (§20). */
export const PURCHASE_STATUSES = ["active", "trialing", "past_due", "canceled", "expired", "refunded", "disputed", "revoked"] as const;
export type PurchaseStatus = (typeof PURCHASE_STATUSES)[number];

/**
 * The status access reads (§20), from the facts kept beside it: a one-time purchase is revoked by
 * a lost dispute, ended by a full refund and suspended by an open dispute; a subscription follows
 * only Stripe's status of it (`baseStatus`): a refunded or disputed invoice changes earnings,
 * never the subscription.
 */
export function purchaseStatus(facts: { model: "one_time" | "subscription"; baseStatus: PurchaseStatus; refunded: boolean; dispute: "open" | "won" | "lost" | null }): PurchaseStatus {
  if (facts.model === "subscription") return facts.baseStatus;
  if (facts.dispute === "lost") return "revoked";
  if (facts.refunded) return "refunded";
  if (facts.dispute === "open") return "disputed";
  return facts.baseStatus;
}

/** The entitlement a purchase of a module grants (§20). */
export const moduleEntitlement = (moduleId: string) => `module:${moduleId}`;

export interface PurchaseTerms {
  purchaseId: string;
  moduleId: string;
  status: PurchaseStatus;
  /** A subscription's period end; null for a one-time purchase, which does not lapse. */
  currentPeriodEnd: Date | null;
  /** The business that bought it, for a business's purchase. */
  businessId?: string;
  /** Whether it reaches this user: their own, or one of the business's first `quantity` seats (after it ended: a seat holder then, §27). */
  reachesUser: boolean;
  /** What its perpetual fallback earned (§27): kept once it no longer grants access; null: nothing. */
  fallbackUntil?: Date | null;
}

export interface EntitlementGrant {
  key: string;
  source: "direct" | "subscription" | "purchase" | "fallback";
  businessId?: string;
  purchaseId?: string;
  /** A fallback grant's date (§27): the module's versions it keeps are those of this date. */
  fallbackUntil?: Date;
}

export interface EntitlementSources {
  /** `users/{uid}.entitlements`. */
  direct: string[];
  /**
   * The businesses the user is a member of, with their subscription if they have one, and whether
   * its entitlements reach this member (`drawsOnSubscription`).
   */
  memberships: { businessId: string; subscription: SubscriptionTerms | null; drawsOnSubscription: boolean }[];
  /** The user's own module purchases and their businesses'. */
  purchases: PurchaseTerms[];
}

/**
 * Where a member's seat stands (§17, §25): whether they hold one, how many seats the business uses,
 * and how many seat holders come before them in the order seats wait in (newest `seatAssignedAt`
 * first, then uid), counted only as far as `holdersToCount` asks, so that deciding never reads
 * the whole business.
 */
export interface SeatStanding {
  seat: boolean;
  seatsUsed: number;
  holdersBefore: number;
  /**
   * Counted from the other end too, for the quantities where that reads fewer index entries
   * (`seatCount`): the seat holders after the member in that order (the older seats), up to `countedTo`.
   */
  holdersAfter?: { count: number; countedTo: number };
}


/**
 * Whether a business's subscription (or a business purchase of `paidSeats`) reaches a member:
 * always when it counts no seats; else through a seat not held back. When Stripe lowers the
 * quantity below the seats in use, the newest `seatsUsed - paidSeats` seats wait until someone
 * frees one: nothing is taken away; they simply draw nothing meanwhile.
 */
export function drawsOnSubscription(standing: SeatStanding, paidSeats: number | null): boolean {
  if (paidSeats === null) return true;
  if (!standing.seat) return false;
  if (standing.seatsUsed <= paidSeats) return true;
  // Counted from the older end for this quantity: fewer than `paidSeats` older seats, theirs is among the oldest `paidSeats`.
  if (standing.holdersAfter && paidSeats <= standing.holdersAfter.countedTo) return standing.holdersAfter.count < paidSeats;
  return standing.holdersBefore >= standing.seatsUsed - paidSeats;
}

/**
 * What to count to decide these quantities for a seat holder: for each quantity below the seats
 * in use, the newer seats (as many as it leaves out) or the older ones (as many as it covers),
 * whichever is fewer; each end counted as far as its quantities need. So a 1-seat purchase of a
 * business of 100,000 reads one index entry, not 99,999. Zero: that end is not counted (no seat,
 * or every quantity covers every seat).
 */
export function seatCount(seat: boolean, seatsUsed: number, paidQuantities: readonly (number | null)[]): { newer: number; older: number } {
  const below = seat ? paidQuantities.filter((paid): paid is number => paid !== null && paid < seatsUsed) : [];
  // Fewer older seats than newer ones to count: the quantity covers less than half.
  const older = below.filter((paid) => paid < seatsUsed - paid);
  const newer = below.filter((paid) => paid >= seatsUsed - paid);
  return { newer: Math.max(0, ...newer.map((paid) => seatsUsed - paid)), older: Math.max(0, ...older) };
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
  for (const purchase of sources.purchases) {
    if (!purchase.reachesUser) continue;
    const whose = { purchaseId: purchase.purchaseId, ...(purchase.businessId ? { businessId: purchase.businessId } : {}) };
    if (purchaseGrants(purchase, now)) grants.push({ key: moduleEntitlement(purchase.moduleId), source: "purchase", ...whose });
    else if (purchase.fallbackUntil) grants.push({ key: moduleEntitlement(purchase.moduleId), source: "fallback", ...whose, fallbackUntil: purchase.fallbackUntil });
  }
  return grants;
}

/**
 * The grants of a key that decide what it gives (§27): a fallback only when nothing else grants
 * the key, for beside a live subscription or another grant the fallback limits nothing.
 */
export function decidingGrants(grants: readonly EntitlementGrant[], key: string): EntitlementGrant[] {
  const matching = grants.filter((grant) => grant.key === key);
  return matching.some((grant) => grant.source !== "fallback") ? matching.filter((grant) => grant.source !== "fallback") : matching;
}

/**
 * The date whose versions bound a user's use of a module (§27), or null when nothing bounds it:
 * the module asks for nothing, or the user holds a key it accepts other than a fallback. Held
 * through fallbacks only: the latest of their dates.
 */
export function fallbackBound(module: ModuleTerms, grants: readonly EntitlementGrant[]): Date | null {
  const full = entitlementKeys(grants.filter((grant) => grant.source !== "fallback"));
  if (usingKey(module, full) !== undefined) return null;
  const key = moduleEntitlement(module.id);
  const dates = grants.filter((grant) => grant.source === "fallback" && grant.key === key).map((grant) => grant.fallbackUntil!.getTime());
  return dates.length === 0 ? null : new Date(Math.max(...dates));
}

/**
 * Whether a purchase grants its module now: active or trialing, or past due within the grace
 * period of its period end (a one-time purchase has none and does not lapse).
 */
export function purchaseGrants(purchase: Pick<PurchaseTerms, "status" | "currentPeriodEnd">, now: Date): boolean {
  const { status, currentPeriodEnd } = purchase;
  if (status !== "active" && status !== "trialing" && status !== "past_due") return false;
  return currentPeriodEnd === null || now.getTime() - currentPeriodEnd.getTime() <= GRACE_PERIOD_MS;
}

/** Whether a business's subscription grants a member its entitlements now: it is live, and it reaches them. */
export function subscriptionGrants(subscription: Pick<SubscriptionTerms, "status" | "currentPeriodEnd"> | null, drawsOnSubscription: boolean, now: Date): boolean {
  return subscription !== null && drawsOnSubscription && grantsEntitlements(effectiveSubscriptionStatus(subscription, now));
}

export function entitlementKeys(grants: readonly EntitlementGrant[]): Set<string> {
  return new Set(grants.map((grant) => grant.key));
}

/** What a module asks of its users: its entitlement, if it has one, and `module:<id>` while it is priced (§20). */
export interface ModuleTerms {
  id: string;
  entitlement?: string | null;
  /** Its price while it is for sale (§20). */
  price?: object | null;
}

/**
 * The key through which a user may use a module: none for a free module (null), else the first of
 * `module:<id>` (priced) and its entitlement that the user holds (undefined: neither).
 */
export function usingKey(module: ModuleTerms, keys: ReadonlySet<string>): string | null | undefined {
  const accepted = [module.price ? moduleEntitlement(module.id) : null, module.entitlement ?? null].filter((key): key is string => key !== null);
  if (accepted.length === 0) return null;
  return accepted.find((key) => keys.has(key));
}

/** A module is usable when it asks for nothing, or the user holds one of the keys it accepts. */
export function isModuleUsable(module: ModuleTerms, keys: ReadonlySet<string>): boolean {
  return usingKey(module, keys) !== undefined;
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
