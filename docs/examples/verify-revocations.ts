import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from "jose";

export interface RevocationEntry {
  moduleId: string;
  /** A version, or "*" for every version of the module. */
  version: string;
  /** The package's SHA-256, or null for "*". */
  sha256: string | null;
  reason: string;
  revokedAt: string;
}

export interface RevocationList {
  serial: number;
  iat: number;
  exp: number;
  entries: RevocationEntry[];
}

/**
 * Checks a `GET /revocations` list offline: signed by a key of the saved `GET /signing-keys`
 * answer, of type `revocations+jwt`, not expired, and not older than the newest list this app
 * accepted before (a lower serial is a replay). Returns the list to keep in place of that one.
 */
export async function acceptRevocationList(
  jws: string,
  savedJwks: JSONWebKeySet,
  newestAccepted: Pick<RevocationList, "serial"> | null,
  now: Date = new Date(),
): Promise<RevocationList> {
  const { payload } = await jwtVerify(jws, createLocalJWKSet(savedJwks), {
    typ: "revocations+jwt",
    algorithms: ["EdDSA"],
    requiredClaims: ["iat", "exp"],
    currentDate: now,
  });
  const list = payload as unknown as RevocationList;
  if (!Number.isInteger(list.serial) || !Array.isArray(list.entries)) throw new Error("Not a revocation list.");
  if (newestAccepted && list.serial < newestAccepted.serial) {
    throw new Error(`Revocation list ${list.serial} is older than the one kept (${newestAccepted.serial}).`);
  }
  return list;
}

/** Whether the kept list forbids loading this package (even offline). */
export function isRevoked(list: RevocationList, pkg: { moduleId: string; version: string; sha256: string }): RevocationEntry | null {
  return (
    list.entries.find(
      (entry) => entry.moduleId === pkg.moduleId && (entry.version === "*" || entry.version === pkg.version || entry.sha256 === pkg.sha256),
    ) ?? null
  );
}
