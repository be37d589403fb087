import { randomUUID } from "node:crypto";
import type { SigningKeys } from "../core/signing";

/**
 * Activation certificates (contract §10): what the desktop app checks offline. Signed with the
 * module-signing keys, so `GET /signing-keys` verifies them, under a `typ` of their own: a package
 * signature (which has none) never passes for a certificate, and a certificate never passes a
 * verifier of package signatures that refuses any `typ`.
 */
export const CERTIFICATE_TYPE = "activation+jwt";

export interface CertificateClaims {
  /** The user's uid. */
  sub: string;
  moduleId: string;
  version: string;
  deviceId: string;
  /** The entitlement the module needs, or null for a free module. */
  entitlement: string | null;
  /** Held through a perpetual fallback alone (§27): the newest version the licence keeps; the app refuses a newer one. */
  maxVersion?: string | null;
  /** For each business of the user's with an install policy, the version of it the certificate was issued under (§26). */
  policyVersions?: Record<string, number>;
  /** Issued and expiry times, in whole seconds since the epoch. */
  iat: number;
  exp: number;
  /** Unique per certificate. */
  jti: string;
}

export function issueCertificate(keys: SigningKeys, claims: Omit<CertificateClaims, "jti">): Promise<string> {
  const payload: CertificateClaims = { ...claims, jti: randomUUID() };
  return keys.sign({ ...payload }, { typ: CERTIFICATE_TYPE });
}
