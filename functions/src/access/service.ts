import type { Firestore } from "firebase-admin/firestore";
import { z } from "zod";
import { businessStore, type BusinessRole } from "../businesses/business-store";
import { entitlementKey } from "../core/documents";
import { ApiError } from "../core/errors";
import { parseInput } from "../core/validation";
import type { OperatorDeps } from "../deps";
import { subscriptionStore, type Subscription } from "../subscriptions/subscription-store";
import { findUser } from "../users/identity";
import { userStore, type UserRecord } from "../users/user-store";
import { effectiveEntitlements, entitlementKeys, type EntitlementGrant } from "./rules";

export interface Membership {
  businessId: string;
  name: string;
  role: BusinessRole;
  subscription: Subscription | null;
}

/** What a user may use, with where it comes from. */
export interface UserAccess {
  user: UserRecord | null;
  memberships: Membership[];
  grants: EntitlementGrant[];
  keys: Set<string>;
}

/**
 * Loads a user's document, businesses and their subscriptions (the user and the business query in
 * parallel, then one batched read of the subscriptions) and computes the effective entitlements.
 */
export async function loadUserAccess(db: Firestore, uid: string, now: Date): Promise<UserAccess> {
  const [user, businesses] = await Promise.all([userStore(db).get(uid), businessStore(db).forMember(uid)]);
  const subscriptions = businesses.length > 0 ? await subscriptionStore(db).getMany(businesses.map((business) => business.id)) : [];
  const memberships: Membership[] = businesses.map((business, index) => ({
    businessId: business.id,
    name: business.name,
    role: business.roles[uid] ?? "member",
    subscription: subscriptions[index],
  }));
  const grants = effectiveEntitlements(
    {
      direct: user?.entitlements ?? [],
      memberships: memberships.map(({ businessId, subscription }) => ({ businessId, subscription })),
    },
    now,
  );
  return { user, memberships, grants, keys: entitlementKeys(grants) };
}

const grantInput = z.object({ user: z.string().min(1), key: entitlementKey });

/** Operators: a direct grant of an entitlement to a user (by uid or email). */
export async function grantEntitlement({ db, auth }: OperatorDeps, input: z.input<typeof grantInput>) {
  const { user: reference, key } = parseInput(grantInput, input);
  const user = await findUser(auth, reference);
  await userStore(db).grant(user.uid, key);
  return { uid: user.uid, email: user.email, key, granted: true };
}

/** Operators: takes a direct grant away; a key the user holds only through a subscription is not one. */
export async function revokeEntitlement({ db, auth }: OperatorDeps, input: z.input<typeof grantInput>) {
  const { user: reference, key } = parseInput(grantInput, input);
  const user = await findUser(auth, reference);
  const users = userStore(db);
  if (!(await users.get(user.uid))?.entitlements.includes(key)) {
    throw new ApiError("entitlement_not_found", `User ${user.email ?? user.uid} has no direct '${key}' entitlement.`);
  }
  await users.revoke(user.uid, key);
  return { uid: user.uid, email: user.email, key, granted: false };
}
