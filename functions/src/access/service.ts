import type { Firestore } from "firebase-admin/firestore";
import {
  businessDocument,
  COLLECTIONS,
  readDocument,
  subscriptionDocument,
  userDocument,
  type BusinessRole,
  type SubscriptionDocument,
  type UserDocument,
} from "../core/documents";
import { effectiveEntitlements, entitlementKeys, type EntitlementGrant } from "./rules";

export interface Membership {
  businessId: string;
  name: string;
  role: BusinessRole;
  subscription: SubscriptionDocument | null;
}

/** What a user may use, with where it comes from. */
export interface UserAccess {
  user: UserDocument | null;
  memberships: Membership[];
  grants: EntitlementGrant[];
  keys: Set<string>;
}

/**
 * Loads a user's document, businesses and their subscriptions (three reads: the user, one query,
 * one batched get) and computes the effective entitlements at `now`.
 */
export async function loadUserAccess(db: Firestore, uid: string, now: Date): Promise<UserAccess> {
  const [userSnapshot, businessSnapshots] = await Promise.all([
    db.collection(COLLECTIONS.users).doc(uid).get(),
    db.collection(COLLECTIONS.businesses).where("memberIds", "array-contains", uid).get(),
  ]);
  const user = readDocument(userDocument, userSnapshot);
  const businesses = businessSnapshots.docs.map((snapshot) => ({
    id: snapshot.id,
    business: readDocument(businessDocument, snapshot)!,
  }));
  const subscriptionSnapshots = businesses.length
    ? await db.getAll(...businesses.map(({ id }) => db.collection(COLLECTIONS.subscriptions).doc(id)))
    : [];
  const memberships: Membership[] = businesses.map(({ id, business }, index) => ({
    businessId: id,
    name: business.name,
    role: business.roles?.[uid] ?? "member",
    subscription: readDocument(subscriptionDocument, subscriptionSnapshots[index]),
  }));
  const grants = effectiveEntitlements(
    {
      direct: user?.entitlements ?? [],
      memberships: memberships.map(({ businessId, subscription }) => ({
        businessId,
        subscription: subscription && {
          status: subscription.status,
          currentPeriodEnd: subscription.currentPeriodEnd.toDate(),
          entitlements: subscription.entitlements,
        },
      })),
    },
    now,
  );
  return { user, memberships, grants, keys: entitlementKeys(grants) };
}
