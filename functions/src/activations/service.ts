import type { z } from "zod";
import { loadInstallAccess } from "../accounts/caller-data";
import { usingKey, type EntitlementGrant } from "../access/rules";
import type { Caller } from "../core/auth";
import { isAlreadyExists, toIso } from "../core/documents";
import type { Deps } from "../deps";
import { storeLookup, usableVersion } from "../marketplace/service";
import { activationStore } from "../accounts/activation-store";
import { utcDay } from "../core/time";
import { deviceRemovedIn, deviceSeenIn } from "../metrics/device-counts";
import { issueCertificate } from "./certificate";
import { certificateExpiry, confirmOnDevice, releaseDevice } from "./rules";
import type { activationSchema } from "./schemas";

type ActivationView = z.output<typeof activationSchema>;

/**
 * Records (or refreshes) the caller's activation of a module version they may use.
 *
 * Without a device, no transaction: the first confirmation creates the activation, every later
 * one (or a concurrent loser of the create) updates it; `activatedAt` is written once, so
 * concurrent confirmations all succeed and agree on it. With a device, a transaction holds the
 * device limit, and the answer carries an activation certificate for that device.
 */
export async function confirmActivation(
  { db, clock, config, signingKeys }: Deps,
  caller: Caller,
  input: { moduleId: string; version?: string; deviceId?: string; appVersion?: string; platform?: string },
): Promise<ActivationView> {
  const now = clock();
  // A write: the caller's access and the module are read afresh.
  const access = await loadInstallAccess(db, caller, now);
  const { module, version, fallback } = await usableVersion(storeLookup(db), access, input.moduleId, input.version, input.appVersion);
  const activations = activationStore(db);
  const { moduleId, deviceId } = input;
  if (!deviceId) return view(await confirmWithoutDevice(activations, caller.uid, { moduleId, version, now }));

  // The time is taken in turn, so activation times follow the order the writes happen in.
  let confirmedAt = now;
  const activation = await activations.change(
    caller.uid,
    moduleId,
    (current) => {
      confirmedAt = clock();
      return confirmOnDevice(current, { moduleId, version, deviceId, now: confirmedAt }, config.activations.deviceLimit);
    },
    // Counted with the change (§28): an install when the device is new to the activation, and an active device.
    (tx, before) => deviceSeenIn(tx, db, { moduleId, uid: caller.uid, deviceId }, { version, platform: input.platform, today: utcDay(confirmedAt), install: !before?.devices.some((device) => device.deviceId === deviceId) }),
  );
  const issuedAt = Math.floor(confirmedAt.getTime() / 1000);
  const entitlement = usingKey(module, access.keys) ?? null;
  const subscriptions = new Map(access.memberships.map((membership) => [membership.businessId, membership.subscription]));
  const purchases = new Map(access.purchases.map((purchase) => [purchase.id, purchase]));
  const periodEndOf = (grant: EntitlementGrant): Date | null => {
    // A direct grant and a fallback (§27) do not lapse.
    if (grant.source === "direct" || grant.source === "fallback") return null;
    if (grant.source === "purchase") return purchases.get(grant.purchaseId!)?.currentPeriodEnd ?? null;
    return subscriptions.get(grant.businessId!)?.currentPeriodEnd ?? new Date(0);
  };
  const certificate = await issueCertificate(signingKeys, {
    sub: caller.uid,
    moduleId,
    version,
    deviceId,
    entitlement,
    // Held through a fallback alone (§27): the newest version the licence keeps.
    ...(fallback ? { maxVersion: fallback.newest } : {}),
    // The policies the certificate was issued under (§26): the app holds it against the signed policies it has.
    ...(access.policies.length > 0 ? { policyVersions: Object.fromEntries(access.policies.map((policy) => [policy.businessId, policy.version])) } : {}),
    iat: issuedAt,
    exp: certificateExpiry(issuedAt, config.activations.certificateLifetimeSeconds, entitlement, access.grants, periodEndOf),
  });
  return { ...view(activation), certificate };
}

async function confirmWithoutDevice(
  activations: ReturnType<typeof activationStore>,
  uid: string,
  { moduleId, version, now }: { moduleId: string; version: string; now: Date },
) {
  const existing = await activations.get(uid, moduleId);
  if (!existing) {
    try {
      await activations.create(uid, { moduleId, version, deviceId: null, activatedAt: now, updatedAt: now, devices: [] });
      return { moduleId, version, activatedAt: now, updatedAt: now };
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
    }
  }
  await activations.refresh(uid, { moduleId, version, updatedAt: now });
  const activatedAt = existing?.activatedAt ?? (await activations.get(uid, moduleId))!.activatedAt;
  return { moduleId, version, activatedAt, updatedAt: now };
}

/** Frees a device's slot of a module (404 when the module is not active on it). */
export async function releaseActivationDevice({ db, clock }: Deps, caller: Caller, moduleId: string, deviceId: string): Promise<void> {
  const now = clock();
  await activationStore(db).change(
    caller.uid,
    moduleId,
    (current) => releaseDevice(current, moduleId, deviceId, now),
    // An uninstall (§28), counted with the removal.
    (tx, before) => deviceRemovedIn(tx, db, { moduleId, uid: caller.uid, deviceId }, { version: before!.devices.find((device) => device.deviceId === deviceId)?.version ?? before!.version, today: utcDay(now) }),
  );
}

function view(activation: { moduleId: string; version: string; activatedAt: Date; updatedAt: Date }): ActivationView {
  return { moduleId: activation.moduleId, version: activation.version, activatedAt: toIso(activation.activatedAt), updatedAt: toIso(activation.updatedAt) };
}
