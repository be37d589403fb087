import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from "jose";

export interface ActivationClaims {
  sub: string;
  moduleId: string;
  version: string;
  deviceId: string;
  entitlement: string | null;
  /** Held through a perpetual fallback alone (§27): the newest version the licence keeps; never run a newer one with it. */
  maxVersion?: string | null;
  /** The version of each of the member's businesses' install policies it was issued under (§26). */
  policyVersions?: Record<string, number>;
  iat: number;
  exp: number;
  jti: string;
}

/**
 * Checks an activation certificate offline: signed by a key of the saved `GET /signing-keys`
 * answer, of type `activation+jwt` (a package signature never passes), not expired, and for this
 * device and module (the app always names both; `mpkg verify-certificate` may leave them out to
 * inspect a certificate). Throws when any of that fails. `now` is the time to check `exp` at (the
 * app's guarded clock; default the system's).
 */
export async function verifyActivationCertificate(
  certificate: string,
  savedJwks: JSONWebKeySet,
  expected: { deviceId?: string; moduleId?: string },
  now?: Date,
): Promise<ActivationClaims> {
  const { payload } = await jwtVerify(certificate, createLocalJWKSet(savedJwks), {
    typ: "activation+jwt",
    algorithms: ["EdDSA"],
    requiredClaims: ["sub", "iat", "exp", "jti"],
    ...(now ? { currentDate: now } : {}),
  });
  const claims = payload as unknown as ActivationClaims;
  if (expected.deviceId !== undefined && claims.deviceId !== expected.deviceId) throw new Error("This certificate belongs to another device.");
  if (expected.moduleId !== undefined && claims.moduleId !== expected.moduleId) throw new Error("This certificate is for another module.");
  return claims;
}
