import { z } from "zod";
import type { CallerData } from "../access/caller-data";
import { effectiveSubscriptionStatus } from "../access/rules";
import { loadUserAccess } from "../access/service";
import type { Caller } from "../core/auth";
import { toIso } from "../core/documents";
import { parseInput } from "../core/validation";
import type { OperatorDeps } from "../deps";
import { findUser } from "./identity";
import type { UserProfile } from "./schemas";

/** The caller's profile; a user without a `users/{uid}` document gets an empty one. */
export function getProfile(caller: Caller, { access, activations }: CallerData): UserProfile {
  return {
    uid: caller.uid,
    email: caller.email,
    displayName: access.user?.displayName ?? caller.name,
    entitlements: access.grants,
    businesses: access.memberships.map(({ businessId, name, role }) => ({ id: businessId, name, role })),
    activations: activations.map((activation) => ({ moduleId: activation.moduleId, version: activation.version, activatedAt: toIso(activation.activatedAt) })),
  };
}

/** Operators: a user as the service sees them: effective entitlements with sources, businesses. */
export async function describeUser({ db, auth, clock }: OperatorDeps, input: { user: string }) {
  const user = await findUser(auth, parseInput(z.object({ user: z.string().min(1) }), input).user);
  const now = clock();
  const access = await loadUserAccess(db, user.uid, now);
  return {
    uid: user.uid,
    email: user.email,
    displayName: access.user?.displayName ?? user.displayName,
    entitlements: access.grants,
    businesses: access.memberships.map(({ businessId, name, role, subscription }) => ({
      id: businessId,
      name,
      role,
      subscription: subscription
        ? { status: effectiveSubscriptionStatus(subscription, now), plan: subscription.plan, currentPeriodEnd: toIso(subscription.currentPeriodEnd) }
        : null,
    })),
  };
}
