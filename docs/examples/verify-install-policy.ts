import { compactVerify, createLocalJWKSet, type JSONWebKeySet } from "jose";
import semver from "semver";

export interface PolicyRule {
  effect: "allow" | "block";
  publisher?: string;
  module?: string;
  versions?: string;
  reason?: string;
}

export interface SignedPolicy {
  businessId: string;
  version: number;
  mode: "open" | "allowlist";
  rules: PolicyRule[];
  minimumVersions: Record<string, string>;
  required: string[];
  message: string | null;
  iat: number;
}

/**
 * Checks a business's signed install policy offline: signed by a key of the saved `GET
 * /signing-keys` answer, of type `policy+jwt` (a package signature or a certificate never
 * passes), for the business the app expects. Keep the one with the highest `version` per business.
 */
export async function verifyInstallPolicy(jws: string, savedJwks: JSONWebKeySet, businessId: string): Promise<SignedPolicy> {
  const { payload, protectedHeader } = await compactVerify(jws, createLocalJWKSet(savedJwks), { algorithms: ["EdDSA"] });
  if (protectedHeader.typ !== "policy+jwt") throw new Error("This is not a signed install policy.");
  const policy = JSON.parse(new TextDecoder().decode(payload)) as SignedPolicy;
  if (policy.businessId !== businessId) throw new Error("This policy is another business's.");
  return policy;
}

/**
 * Whether the policy lets the app install a module's version, with the reason to show when not:
 * the most specific matching rule decides (module + range, module, publisher + range,
 * publisher; `block` wins a tie); with none, an open policy or the business's own module allows;
 * nothing below a minimum version is allowed.
 */
export function allowedOffline(
  policy: SignedPolicy,
  module: { id: string; publisherId: string; businessId: string | null },
  version: string,
): { allowed: boolean; reason?: string } {
  const minimum = policy.minimumVersions[module.id];
  if (minimum !== undefined && semver.lt(version, minimum)) return { allowed: false, reason: `Versions below ${minimum} are not allowed.` };
  const matching = policy.rules.filter(
    (rule) =>
      (rule.module === undefined || rule.module === module.id) &&
      (rule.publisher === undefined || rule.publisher === module.publisherId) &&
      (rule.versions === undefined || semver.satisfies(version, rule.versions, { includePrerelease: true })),
  );
  const weight = (rule: PolicyRule) => (rule.module !== undefined ? 2 : 0) + (rule.versions !== undefined ? 1 : 0);
  const top = Math.max(...matching.map(weight));
  const deciding = matching.filter((rule) => weight(rule) === top);
  const blocking = deciding.find((rule) => rule.effect === "block");
  if (blocking) return { allowed: false, reason: blocking.reason ?? policy.message ?? "Blocked by your company." };
  if (deciding.length > 0 || policy.mode === "open" || module.businessId === policy.businessId) return { allowed: true };
  return { allowed: false, reason: policy.message ?? "Not on your company's list of allowed modules." };
}
