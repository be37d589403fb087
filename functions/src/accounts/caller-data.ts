import type { Firestore } from "firebase-admin/firestore";
import { drawsOnSubscription, effectiveEntitlements, entitlementKeys, ssoBlocks, type BusinessRole, type EntitlementGrant } from "../access/rules";
import { activationStore, type ActivationRecord } from "./activation-store";
import { businessStore } from "./business-store";
import { memberOf, seatHolders } from "./business-records";
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

/**
 * Loads a user's document, own purchases and businesses (in parallel), then their businesses'
 * subscriptions and purchases (in parallel), and computes the effective entitlements.
 */
export async function loadUserAccess(db: Firestore, subject: AccessSubject, now: Date): Promise<UserAccess> {
  const { uid } = subject;
  const purchases = purchaseStore(db);
  const [user, found, ownPurchases] = await Promise.all([userStore(db).get(uid), businessStore(db).forMember(uid), purchases.ofOwners([{ kind: "user", id: uid }])]);
  const blocked = new Set(found.filter((business) => ssoBlocks(business.sso, business.roles[uid] ?? "member", subject.signInProvider)).map((business) => business.id));
  // A business that requires its SSO gives nothing to a request that did not come through it.
  const businesses = found.filter((business) => !blocked.has(business.id));
  const [subscriptions, businessPurchases] =
    businesses.length > 0
      ? await Promise.all([
          subscriptionStore(db).getMany(businesses.map((business) => business.id)),
          purchases.ofOwners(businesses.map((business) => ({ kind: "business" as const, id: business.id }))),
        ])
      : [[], []];
  const holdersOf = new Map(businesses.map((business) => [business.id, seatHolders(business)]));
  // A business's purchase reaches the first `quantity` of its seat holders, oldest seats first (§17).
  const reaching = businessPurchases.filter((purchase) => drawsOnSubscription(uid, holdersOf.get(purchase.owner.id) ?? [], purchase.quantity));
  const memberships: Membership[] = businesses.map((business, index) => {
    const subscription = subscriptions[index];
    return {
      businessId: business.id,
      name: business.name,
      role: business.roles[uid] ?? "member",
      subscription,
      seat: Boolean(memberOf(business, uid)?.seat),
      drawsOnSubscription: drawsOnSubscription(uid, seatHolders(business), subscription?.seats ?? null),
      ssoRequired: false,
    };
  });
  for (const business of found.filter(({ id }) => blocked.has(id))) {
    memberships.push({ businessId: business.id, name: business.name, role: business.roles[uid] ?? "member", subscription: null, seat: Boolean(memberOf(business, uid)?.seat), drawsOnSubscription: false, ssoRequired: true });
  }
  const grants = effectiveEntitlements(
    {
      direct: user?.entitlements ?? [],
      memberships: memberships.map(({ businessId, subscription, drawsOnSubscription }) => ({ businessId, subscription, drawsOnSubscription })),
      purchases: [...ownPurchases, ...reaching].map((purchase) => ({
        purchaseId: purchase.id,
        moduleId: purchase.moduleId,
        status: purchase.status,
        currentPeriodEnd: purchase.currentPeriodEnd,
        ...(purchase.owner.kind === "business" ? { businessId: purchase.owner.id } : {}),
        reachesUser: true,
      })),
    },
    now,
  );
  return { user, memberships, purchases: [...ownPurchases, ...reaching], grants, keys: entitlementKeys(grants) };
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
