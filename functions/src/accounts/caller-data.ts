import type { Firestore } from "firebase-admin/firestore";
import { drawsOnSubscription, effectiveEntitlements, entitlementKeys, purchaseGrants, ssoBlocks, type BusinessRole, type EntitlementGrant, type SeatStanding } from "../access/rules";
import type { Policy, PolicySummary } from "../access/install-policy";
import { reachedBusinesses, type Viewer } from "../access/visibility";
import { activationStore, type ActivationRecord } from "./activation-store";
import { fallbackHolderStore } from "./fallback-holder-store";
import { holdersDue, recordDueHolders } from "./fallback-holders";
import { businessStore } from "./business-store";
import { memberStore } from "./member-store";
import { policyStore } from "./policy-store";
import { purchaseStore, type PurchaseRecord } from "./purchase-store";
import { subscriptionStore, type SubscriptionRecord } from "./subscription-store";
import { userStore, type UserRecord } from "./user-store";

/**
 * A caller's own data (contract §13), loaded for the features that decide on it: read at every
 * request, whoever wrote it last (the API, the operator CLI, the billing webhook, the console).
 */

export interface Membership {
  businessId: string;
  name: string;
  role: BusinessRole;
  subscription: SubscriptionRecord | null;
  /** Whether the member holds a seat (§17). */
  seat: boolean;
  /**
   * Whether the subscription's entitlements reach this member: it counts no seats, the member's
   * seat is not held back, and the business's SSO does not require another sign-in (§22).
   */
  drawsOnSubscription: boolean;
  /** The business enforces single sign-on and this request did not come through it (§22). */
  ssoRequired: boolean;
  standing: SeatStanding;
  /**
   * The business's install policy, as members are shown it (§26); null when it has none. It binds
   * the member however they signed in: SSO decides what a business grants, never what it restricts (§22).
   */
  policy: PolicySummary | null;
}

/** Whose access: the user, and how their ID token signed in (null: not through any provider, as for an operator's view). */
export interface AccessSubject {
  uid: string;
  signInProvider?: string | null;
}

/** What a user may use, with where it comes from. */
export interface UserAccess {
  user: UserRecord | null;
  memberships: Membership[];
  /** The user's own module purchases, and those of their businesses that reach them (§20). */
  purchases: PurchaseRecord[];
  grants: EntitlementGrant[];
  keys: Set<string>;
}

/** What installing needs (§26): the user's access, and the whole install policy of each of their businesses that has one. */
export interface InstallAccess extends UserAccess {
  /** Every one must allow what the user installs. */
  policies: Policy[];
}

/**
 * Loads a user's document, own purchases and memberships (in parallel), then their businesses,
 * subscriptions and purchases (in parallel), and computes the effective entitlements: the same
 * documents in a business of 100,000 as in one of 5 (§25). A member's seat under a paid quantity
 * costs a third round trip (the seat counts, and the seat holders before theirs while the
 * quantity is below the seats in use); a business purchase that ended with a fallback (§27), one
 * read more (whether the member keeps it).
 */
export async function loadUserAccess(db: Firestore, subject: AccessSubject, now: Date): Promise<UserAccess> {
  const { uid } = subject;
  const purchases = purchaseStore(db);
  const members = memberStore(db);
  const [user, memberships, ownPurchases] = await Promise.all([userStore(db).get(uid), members.ofUser(uid), purchases.ofOwners([{ kind: "user", id: uid }])]);
  // A member suspended by SCIM sees nothing of the business, and draws nothing from it.
  const active = memberships.filter(({ member }) => !member.suspended);
  const ids = active.map(({ businessId }) => businessId);
  const [businesses, subscriptions, businessPurchases] =
    ids.length > 0
      ? await Promise.all([businessStore(db).getMany(ids), subscriptionStore(db).getMany(ids), purchases.ofOwners(ids.map((id) => ({ kind: "business" as const, id })))])
      : [[], [], []];
  // Where the member's seat stands among the business's (§17, §25): read only for a seat under a
  // paid quantity (a subscription's seats, the quantity of a business purchase that grants now:
  // refunded and ended ones decide nothing), counted only while the quantity is below the seats
  // in use, from whichever end reads less (access/rules.ts seatCount).
  const standings = await Promise.all(
    active.map(async ({ businessId, member }, index) => {
      const quantities = [subscriptions[index]?.seats ?? null, ...businessPurchases.filter((purchase) => purchase.owner.id === businessId && purchaseGrants(purchase, now)).map((purchase) => purchase.quantity)];
      if (!member.seat || quantities.every((quantity) => quantity === null)) return { seat: member.seat, seatsUsed: 0, holdersBefore: 0 };
      return members.standing(businessId, member, await members.seatsUsed(businessId), quantities);
    }),
  );
  const result: Membership[] = [];
  const reachable = new Set<string>();
  active.forEach(({ businessId, member }, index) => {
    const business = businesses[index];
    if (!business) return;
    const ssoRequired = ssoBlocks(business.sso, member.role, subject.signInProvider);
    // A business that requires its SSO gives nothing to a request that did not come through it.
    const subscription = ssoRequired ? null : subscriptions[index];
    result.push({
      businessId,
      name: business.name,
      role: member.role,
      subscription,
      seat: member.seat,
      drawsOnSubscription: !ssoRequired && drawsOnSubscription(standings[index], subscription?.seats ?? null),
      ssoRequired,
      standing: standings[index],
      policy: business.policy,
    });
    if (!ssoRequired) reachable.add(businessId);
  });
  const standingIn = new Map(result.map((membership) => [membership.businessId, membership.standing]));
  // A business's purchase reaches the first `quantity` of its seat holders, oldest seats first
  // (§17); once ended with a fallback, the members it reached then (§27), whatever their seats now.
  const reached = businessPurchases.filter((purchase) => reachable.has(purchase.owner.id));
  const ended = reached.filter((purchase) => purchase.fallbackUntil !== null && purchase.fallback === "perpetual" && !purchaseGrants(purchase, now));
  const recorded = await Promise.all(ended.map((purchase) => (holdersDue(purchase, now) ? recordDueHolders(db, purchase.id, now) : purchase.fallbackHoldersAt)));
  const holds = ended.length > 0 ? await fallbackHolderStore(db).holds(ended.map((purchase, index) => ({ id: purchase.id, fallbackHoldersAt: recorded[index] })), uid) : [];
  const endedIds = new Set(ended.map((purchase) => purchase.id));
  const keeps = new Set(ended.filter((_, index) => holds[index]).map((purchase) => purchase.id));
  const reaching = reached.filter((purchase) => (endedIds.has(purchase.id) ? keeps.has(purchase.id) : drawsOnSubscription(standingIn.get(purchase.owner.id)!, purchase.quantity)));
  const grants = effectiveEntitlements(
    {
      direct: user?.entitlements ?? [],
      memberships: result.map(({ businessId, subscription, drawsOnSubscription }) => ({ businessId, subscription, drawsOnSubscription })),
      purchases: [...ownPurchases, ...reaching].map((purchase) => ({
        purchaseId: purchase.id,
        moduleId: purchase.moduleId,
        status: purchase.status,
        currentPeriodEnd: purchase.currentPeriodEnd,
        ...(purchase.owner.kind === "business" ? { businessId: purchase.owner.id } : {}),
        reachesUser: true,
        fallbackUntil: purchase.fallback === "perpetual" ? purchase.fallbackUntil : null,
      })),
    },
    now,
  );
  return { user, memberships: result, purchases: [...ownPurchases, ...reaching], grants, keys: entitlementKeys(grants) };
}

/**
 * A user's access with the install policies that hold them (§26), for what installs: a business's
 * document says whether it has a policy, so only a member of one with a policy reads its rules,
 * in one more batched read.
 */
export async function loadInstallAccess(db: Firestore, subject: AccessSubject, now: Date): Promise<InstallAccess> {
  const access = await loadUserAccess(db, subject, now);
  return { ...access, policies: await installPoliciesOf(db, access) };
}

/** The whole install policies of the businesses whose documents say they have one (none read when none does). */
export async function installPoliciesOf(db: Firestore, access: Pick<UserAccess, "memberships">): Promise<Policy[]> {
  const governed = access.memberships.filter((membership) => membership.policy !== null).map((membership) => membership.businessId);
  if (governed.length === 0) return [];
  return (await policyStore(db).getMany(governed)).filter((policy): policy is Policy => policy !== null);
}

/** What reads about a caller need: their access (entitlements, memberships) and activations. */
export interface CallerData {
  access: UserAccess;
  activations: ActivationRecord[];
}

/**
 * A caller's access and activations. Two round trips: the user document, the business query and
 * the activations in parallel, then the subscriptions in one batched read.
 */
export async function loadCallerData(db: Firestore, subject: AccessSubject, now: Date): Promise<CallerData> {
  const [access, activations] = await Promise.all([loadUserAccess(db, subject, now), activationStore(db).list(subject.uid)]);
  return { access, activations };
}

/** Who views a module (§26): the businesses the caller's request reaches, read once, and only if a private module asks. */
export function viewerOf(db: Firestore, subject: AccessSubject | null, now: Date): Viewer {
  if (!subject) return null;
  let reached: Promise<ReadonlySet<string>> | undefined;
  return () => (reached ??= loadUserAccess(db, subject, now).then((access) => reachedBusinesses(access.memberships)));
}
