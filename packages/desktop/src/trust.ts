import { readdirSync, rmSync } from "node:fs";
import { compactVerify, createLocalJWKSet, type JSONWebKeySet } from "jose";
import { acceptRevocationList, isRevoked, type RevocationEntry, type RevocationList } from "../../../docs/examples/verify-revocations";
import { allowedOffline, verifyInstallPolicy, type SignedPolicy } from "../../../docs/examples/verify-install-policy";
import type { ClockGuard } from "./clock";
import type { DataDirectory } from "./data-dir";
import { integrityFailed } from "./errors";
import { answerOf, type Transport } from "./http";

/**
 * What the app trusts offline, kept in dataDir/trust: the service's signing keys, the newest
 * signed revocation lists (the public one and each business's), and each business's signed
 * install policy. Each is checked when it arrives (signature, type, a serial or version that only
 * grows) and again when it is read.
 */
export function trustStore(dir: DataDirectory, clock: ClockGuard) {
  const keysFile = dir.at("trust", "signing-keys.json");
  const listFile = (businessId: string | null) => dir.at("trust", businessId ? `revocations-${businessId}.jws` : "revocations.jws");
  const policyFile = (businessId: string) => dir.at("trust", "policies", `${businessId}.jws`);

  const signingKeys = (): JSONWebKeySet | null => dir.readJson<JSONWebKeySet>(keysFile);
  const requireKeys = (): JSONWebKeySet => {
    const keys = signingKeys();
    if (!keys) throw integrityFailed("No signing keys are kept yet: go online once (refresh or install).");
    return keys;
  };

  /** A kept list, its signature checked again; expired or not (offline, the newest one known is the best there is). */
  async function keptList(businessId: string | null): Promise<RevocationList | null> {
    const jws = dir.readText(listFile(businessId));
    if (!jws) return null;
    try {
      const { payload, protectedHeader } = await compactVerify(jws, createLocalJWKSet(requireKeys()), { algorithms: ["EdDSA"] });
      if (protectedHeader.typ !== "revocations+jwt") return null;
      return JSON.parse(new TextDecoder().decode(payload)) as RevocationList;
    } catch {
      return null;
    }
  }

  async function keptPolicy(businessId: string): Promise<SignedPolicy | null> {
    const jws = dir.readText(policyFile(businessId));
    if (!jws) return null;
    return verifyInstallPolicy(jws, requireKeys(), businessId).catch(() => null);
  }

  return {
    signingKeys: requireKeys,

    /**
     * Fetches the signing keys, the revocation lists and the policies of the caller's businesses
     * (from `profile`, read meanwhile), keeping what verifies; a business the caller left loses
     * its kept policy.
     */
    async refresh(http: Transport, profile: Promise<{ businesses: { id: string }[]; policies: { businessId: string }[] }>): Promise<void> {
      const [keys, publicList, { businesses, policies }] = await Promise.all([
        http.api.GET("/signing-keys").then((answer) => answerOf(answer) as JSONWebKeySet),
        http.api.GET("/revocations").then((answer) => answerOf(answer).list),
        profile,
      ]);
      dir.writeAtomically(keysFile, JSON.stringify(keys));
      const now = clock.now();
      const [businessLists, signedPolicies] = await Promise.all([
        Promise.all(
          businesses.map(({ id: businessId }) =>
            http.api.GET("/businesses/{businessId}/revocations", { params: { path: { businessId } } }).then((answer) => ({ businessId, list: answerOf(answer).list })),
          ),
        ),
        Promise.all(
          policies.map(({ businessId }) =>
            http.api.GET("/businesses/{businessId}/policy/signed", { params: { path: { businessId } } }).then((answer) => ({ businessId, jws: answerOf(answer).jws })),
          ),
        ),
      ]);
      for (const { businessId, list } of [{ businessId: null, list: publicList }, ...businessLists]) {
        const kept = await keptList(businessId);
        const accepted = await acceptRevocationList(list, keys, kept, now).catch((error: Error) => {
          throw integrityFailed(`The revocation list does not verify: ${error.message}`, error);
        });
        clock.sawSigned(accepted.iat);
        if (!kept || accepted.serial >= kept.serial) dir.writeAtomically(listFile(businessId), list);
      }
      for (const { businessId, jws } of signedPolicies) {
        const policy = await verifyInstallPolicy(jws, keys, businessId).catch((error: Error) => {
          throw integrityFailed(`The install policy of ${businessId} does not verify: ${error.message}`, error);
        });
        const kept = await keptPolicy(businessId);
        if (!kept || policy.version >= kept.version) dir.writeAtomically(policyFile(businessId), jws);
      }
      const current = new Set(policies.map(({ businessId }) => `${businessId}.jws`));
      for (const file of readdirSync(dir.at("trust", "policies"))) if (!current.has(file)) rmSync(dir.at("trust", "policies", file), { force: true });
    },

    /** The kept lists' entry that revokes this package, if any. */
    async revocationOf(pkg: { moduleId: string; version: string; sha256: string; businessId: string | null }): Promise<RevocationEntry | null> {
      for (const businessId of [null, ...(pkg.businessId ? [pkg.businessId] : [])]) {
        const list = await keptList(businessId);
        const entry = list && isRevoked(list, pkg);
        if (entry) return entry;
      }
      return null;
    },

    /** The kept signed policies of these businesses (each read and checked once), by business; a business without one is left out. */
    async keptPolicies(businessIds: string[]): Promise<Map<string, SignedPolicy>> {
      const policies = await Promise.all(businessIds.map(keptPolicy));
      return new Map(policies.filter((policy): policy is SignedPolicy => policy !== null).map((policy) => [policy.businessId, policy]));
    },

    /** Whether every one of these policies lets this version in (§26), with the first refusal's business and reason. */
    policyRefusal(policies: Iterable<SignedPolicy>, module: { id: string; publisherId: string; businessId: string | null }, version: string): { businessId: string; reason: string } | null {
      for (const policy of policies) {
        const decision = allowedOffline(policy, module, version);
        if (!decision.allowed) return { businessId: policy.businessId, reason: decision.reason ?? "Blocked by your company." };
      }
      return null;
    },
  };
}

export type TrustStore = ReturnType<typeof trustStore>;
