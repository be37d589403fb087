import { decidingGrants, GRACE_PERIOD_MS, type EntitlementGrant } from "../access/rules";
import { ApiError } from "../core/errors";
import type { ActivationRecord } from "../accounts/activation-store";

/** The device and certificate rules of the contract (§10), as pure functions of their inputs. */

/**
 * The activation after a confirmation on `deviceId`: a known device moves its `lastSeenAt` and
 * version (keeping `activatedAt`); a new one takes a free slot, or is refused when `limit`
 * devices hold them all.
 */
export function confirmOnDevice(
  current: ActivationRecord | null,
  confirmation: { moduleId: string; version: string; deviceId: string; now: Date },
  limit: number,
): ActivationRecord {
  const { moduleId, version, deviceId, now } = confirmation;
  const devices = current?.devices ?? [];
  const known = devices.some((device) => device.deviceId === deviceId);
  if (!known && devices.length >= limit) {
    throw new ApiError(
      "device_limit_reached",
      `Module '${moduleId}' is active on ${devices.length} devices, the most allowed (${limit}). Release one with DELETE /modules/activations/${moduleId}/devices/{deviceId}.`,
    );
  }
  return {
    moduleId,
    version,
    deviceId,
    activatedAt: current?.activatedAt ?? now,
    updatedAt: now,
    devices: known
      ? devices.map((device) => (device.deviceId === deviceId ? { ...device, lastSeenAt: now, version } : device))
      : [...devices, { deviceId, activatedAt: now, lastSeenAt: now, version }],
  };
}

/** The activation without `deviceId`, whose slot is free again. */
export function releaseDevice(current: ActivationRecord | null, moduleId: string, deviceId: string, now: Date): ActivationRecord {
  if (!current?.devices.some((device) => device.deviceId === deviceId)) {
    throw new ApiError("device_not_found", `Module '${moduleId}' is not active on a device '${deviceId}'.`);
  }
  return {
    ...current,
    deviceId: current.deviceId === deviceId ? null : current.deviceId,
    updatedAt: now,
    devices: current.devices.filter((device) => device.deviceId !== deviceId),
  };
}

/**
 * When a certificate issued at `issuedAt` (whole seconds) for a module used through `entitlement`
 * expires, in whole seconds: `maxLifetimeSeconds` later, and, when only grants that lapse give
 * the entitlement (business subscriptions, subscription purchases), no later than the last of
 * their period ends plus the grace period. A free module, a direct grant or a one-time purchase
 * is bound by the lifetime alone.
 */
export function certificateExpiry(
  issuedAt: number,
  maxLifetimeSeconds: number,
  entitlement: string | null,
  grants: EntitlementGrant[],
  /** The period end a grant lapses at; null for a grant that does not lapse. */
  periodEndOf: (grant: EntitlementGrant) => Date | null,
): number {
  const latest = issuedAt + maxLifetimeSeconds;
  if (entitlement === null) return latest;
  // A fallback (§27) frees the certificate from a period end only when it is the caller's only grant of the module.
  const periodEnds = decidingGrants(grants, entitlement).map(periodEndOf);
  if (periodEnds.length === 0 || periodEnds.some((end) => end === null)) return latest;
  const bound = Math.floor((Math.max(...periodEnds.map((end) => end!.getTime())) + GRACE_PERIOD_MS) / 1000);
  return Math.min(latest, bound);
}
