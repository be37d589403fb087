import { z } from "zod";
import { loadUserAccess, type CallerData, type UserAccess } from "../accounts/caller-data";
import { fallbackVersionsOf } from "../access/fallback";
import type { EntitlementGrant } from "../access/rules";
import type { Deps } from "../deps";
import { moduleStore } from "../marketplace/module-store";
import { activationStore, type ActivationRecord, type DeviceActivationRecord } from "../accounts/activation-store";
import { decidingGrants, effectiveSubscriptionStatus, subscriptionGrants } from "../access/rules";
import type { Caller } from "../core/auth";
import { toIso } from "../core/documents";
import { parseInput } from "../core/validation";
import type { OperatorDeps } from "../deps";
import { findUser } from "../accounts/identity";
import type { UserProfile } from "./schemas";

/**
 * The newest fallback version of each purchase that earned a fallback date (§27), by purchase id:
 * the modules are read only when there is one (one batched read).
 */
export async function fallbackVersionsOfPurchases(db: Deps["db"], access: Pick<UserAccess, "purchases">): Promise<Map<string, string | null>> {
  const earned = access.purchases.filter((purchase) => purchase.fallback === "perpetual" && purchase.fallbackUntil !== null);
  if (earned.length === 0) return new Map();
  const ids = [...new Set(earned.map((purchase) => purchase.moduleId))];
  const modules = new Map((await moduleStore(db).getModules(ids)).map((module, index) => [ids[index], module]));
  return new Map(earned.map((purchase) => [purchase.id, fallbackVersionsOf(modules.get(purchase.moduleId)?.versionSummary ?? [], purchase.fallbackUntil!).newest]));
}

/** The purchases whose fallback is what grants their module (§27): ended, and the module granted no other way. */
const grantingThroughFallback = (grants: readonly EntitlementGrant[]): ReadonlySet<string | undefined> =>
  new Set(grants.filter((grant) => grant.source === "fallback" && decidingGrants(grants, grant.key).includes(grant)).map((grant) => grant.purchaseId));

/**
 * A purchase's fallback (§27) as /users/me shows it: `fallbackUntil` and `fallbackVersion` once it
 * is what grants the module; before, while something else grants it, what would stay the buyer's
 * if it ended (`fallbackIfEnded`), so that an app never reads a live subscription as limited.
 */
function fallbackFields(purchase: UserAccess["purchases"][number], grants: boolean, fallbackVersions: ReadonlyMap<string, string | null>) {
  if (!fallbackVersions.has(purchase.id)) return {};
  const fields = { fallbackUntil: toIso(purchase.fallbackUntil!), fallbackVersion: fallbackVersions.get(purchase.id)! };
  return grants ? fields : { fallbackIfEnded: fields };
}

/** A grant as the API shows it: a fallback's with the newest version it keeps (§27). */
const grantView = (fallbackVersions: ReadonlyMap<string, string | null>) => ({ fallbackUntil: _date, ...grant }: EntitlementGrant) =>
  grant.source === "fallback" ? { ...grant, maxVersion: fallbackVersions.get(grant.purchaseId!) ?? null } : grant;

/** The caller's profile; a user without a `users/{uid}` document gets an empty one. */
export function getProfile(caller: Caller, { access, activations }: CallerData, now: Date, fallbackVersions: ReadonlyMap<string, string | null>): UserProfile {
  const fallbackGrants = grantingThroughFallback(access.grants);
  return {
    uid: caller.uid,
    email: caller.email,
    displayName: access.user?.displayName ?? caller.name,
    entitlements: access.grants.map(grantView(fallbackVersions)),
    businesses: access.memberships.map((membership) => ({
      id: membership.businessId,
      name: membership.name,
      role: membership.role,
      seat: membership.seat,
      entitled: subscriptionGrants(membership.subscription, membership.drawsOnSubscription, now),
      ssoRequired: membership.ssoRequired,
    })),
    purchases: access.purchases.map((purchase) => ({
      id: purchase.id,
      moduleId: purchase.moduleId,
      model: purchase.model,
      status: purchase.status,
      currentPeriodEnd: purchase.currentPeriodEnd ? toIso(purchase.currentPeriodEnd) : null,
      ...(purchase.owner.kind === "business" ? { businessId: purchase.owner.id } : {}),
      ...fallbackFields(purchase, fallbackGrants.has(purchase.id), fallbackVersions),
    })),
    policies: access.memberships.flatMap(({ businessId, policy }) => (policy ? [{ businessId, version: policy.version, mode: policy.mode, required: policy.required, message: policy.message }] : [])),
    activations: activations.map(activationView),
  };
}

function activationView(activation: ActivationRecord) {
  return {
    moduleId: activation.moduleId,
    version: activation.version,
    activatedAt: toIso(activation.activatedAt),
    devices: activation.devices.map(deviceView),
  };
}

function deviceView(device: DeviceActivationRecord) {
  return { deviceId: device.deviceId, activatedAt: toIso(device.activatedAt), lastSeenAt: toIso(device.lastSeenAt) };
}

/** Operators: a user as the service sees them: effective entitlements with sources, businesses, activations and their devices. */
export async function describeUser({ db, auth, clock }: OperatorDeps, input: { user: string }) {
  const user = await findUser(auth, parseInput(z.object({ user: z.string().min(1) }), input).user);
  const now = clock();
  const [access, activations] = await Promise.all([loadUserAccess(db, { uid: user.uid }, now), activationStore(db).list(user.uid)]);
  const fallbackVersions = await fallbackVersionsOfPurchases(db, access);
  return {
    uid: user.uid,
    email: user.email,
    displayName: access.user?.displayName ?? user.displayName,
    entitlements: access.grants.map(grantView(fallbackVersions)),
    businesses: access.memberships.map(({ businessId, name, role, subscription, seat, drawsOnSubscription, ssoRequired }) => ({
      id: businessId,
      name,
      role,
      seat,
      ssoRequired,
      entitled: subscriptionGrants(subscription, drawsOnSubscription, now),
      subscription: subscription
        ? { status: effectiveSubscriptionStatus(subscription, now), plan: subscription.plan, currentPeriodEnd: toIso(subscription.currentPeriodEnd) }
        : null,
    })),
    activations: activations.map(({ moduleId, version, activatedAt, updatedAt }) => ({ moduleId, version, activatedAt: toIso(activatedAt), updatedAt: toIso(updatedAt) })),
    // One row per device (not nested), so the CLI's table shows them.
    devices: activations.flatMap(({ moduleId, devices }) => devices.map((device) => ({ moduleId, ...deviceView(device), version: device.version }))),
  };
}
