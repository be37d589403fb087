import type { FallbackVersions } from "./fallback";
import type { DeveloperCaller } from "../core/auth";
import { ApiError } from "../core/errors";
import { moduleNotFound } from "./visibility";
import { firstRefusal, policySubject, type Policy } from "./install-policy";
import { isModuleUsable, moduleEntitlement, type ModuleTerms } from "./rules";

/**
 * Who may do what with a module, apart from the routes: using (confirm, download) needs the
 * module's entitlement; changing (sign, publish) needs ownership and a version not yet published;
 * a publisher signs only ids in its own namespace.
 */
export function assertMayUseModule(module: ModuleTerms, keys: ReadonlySet<string>): void {
  if (isModuleUsable(module, keys)) return;
  const needs = module.price
    ? `a purchase ('${moduleEntitlement(module.id)}': POST /modules/${module.id}/checkout)${module.entitlement ? ` or the '${module.entitlement}' entitlement` : ""}`
    : `the '${module.entitlement}' entitlement`;
  throw new ApiError("not_entitled", `Module '${module.id}' needs ${needs}.`);
}

/**
 * A developer route's module is the caller's: another developer's public module is 403
 * `not_owner`; a business's private module does not exist for anyone who does not act for it
 * (§26), so it answers the same 404 as an id never published.
 */
export function assertOwnsModule(moduleId: string, module: { developerId: string; businessId: string | null }, developerId: string): void {
  if (module.developerId === developerId) return;
  if (module.businessId !== null) throw moduleNotFound(moduleId);
  throw new ApiError("not_owner", `Module '${moduleId}' belongs to another developer.`);
}

/** Signing or publishing `version`: the module (if it exists yet) is the caller's, the version is not published. */
export function assertMayChangeVersion(
  target: { moduleId: string; version: string },
  module: { developerId: string; businessId: string | null } | null,
  record: { state: string } | null,
  developerId: string,
): void {
  if (module) assertOwnsModule(target.moduleId, module, developerId);
  if (record?.state === "published") {
    throw new ApiError("version_already_published", `${target.moduleId}@${target.version} is published; published versions are immutable.`);
  }
}

export function assertInNamespace(moduleId: string, publisherId: string): void {
  if (!moduleId.startsWith(`${publisherId}.`)) {
    throw new ApiError("namespace_mismatch", `Module ids of publisher '${publisherId}' start with '${publisherId}.'; got '${moduleId}'.`);
  }
}

/** How a publisher authenticated: an ID token, an access token (mpt_), or trusted publishing's OIDC token (mpo_). */
export type PublisherCredential = { kind: "id-token" } | { kind: "access-token" } | { kind: "oidc"; moduleIds: string[] };

/** How a developer caller authenticated, as the publish policy and a publish token's scope see it. */
export const credentialOf = (caller: DeveloperCaller): PublisherCredential =>
  caller.publishToken
    ? { kind: "oidc", moduleIds: caller.publishToken.moduleIds }
    : caller.accessTokenId
      ? { kind: "access-token" }
      : { kind: "id-token" };

/** A publish token (mpo_) acts on the modules its trusted publishers named, and on nothing else. */
export function assertInCredentialScope(moduleId: string, credential: PublisherCredential): void {
  if (credential.kind === "oidc" && !credential.moduleIds.includes(moduleId)) {
    throw new ApiError("not_owner", `This publish token is for ${credential.moduleIds.join(", ")} only, not '${moduleId}'.`);
  }
}

/**
 * The owner's publish policy (§15) on a change of a version (sign, publish, yank, unyank): with
 * `requireTrustedPublishing` only an OIDC publish token may make it, so a leaked ID or access
 * token cannot; with `requireAuthorSignature` a sign must carry a valid author signature.
 */
export function assertPolicyAllows(
  moduleId: string,
  policy: { requireTrustedPublishing: boolean; requireAuthorSignature: boolean },
  change: { credential: PublisherCredential; authorSigned?: boolean },
): void {
  if (policy.requireTrustedPublishing && change.credential.kind !== "oidc") {
    throw new ApiError("policy_violation", `Module '${moduleId}' requires trusted publishing: change it from CI with a publish token (POST /developers/auth/oidc), not an ${change.credential.kind === "id-token" ? "ID" : "access"} token.`);
  }
  if (policy.requireAuthorSignature && change.authorSigned === false) {
    throw new ApiError("policy_violation", `Module '${moduleId}' requires an author signature: send X-Author-Signature (mpkg publish --key).`);
  }
}

/**
 * A version the caller's businesses' install policies must all allow (§26): 403 `blocked_by_policy`
 * with the business and its reason (the deciding rule's, else the policy's message).
 */
export function assertAllowedByPolicies(policies: readonly Policy[], module: { id: string; publisherId: string; businessId?: string | null }, version: string): void {
  const refusal = firstRefusal(policies, policySubject(module), version);
  if (!refusal) return;
  const reason = refusal.decision.reason!;
  throw new ApiError("blocked_by_policy", `${module.id} ${version} is blocked by the install policy of business '${refusal.policy.businessId}': ${reason}`, {
    extensions: { businessId: refusal.policy.businessId, reason },
  });
}

/**
 * A version a user holding a module through its fallback alone may use (§27): one of the fallback
 * versions, else 403 `fallback_only` naming the newest of them.
 */
export function assertWithinFallback(moduleId: string, fallback: FallbackVersions | null, version: string): void {
  if (fallback === null || fallback.allows(version)) return;
  throw new ApiError(
    "fallback_only",
    `${moduleId} ${version} is newer than your licence keeps: your subscription ended, and ${fallback.newest ? `versions up to ${fallback.newest}` : "no version"} of it stay${fallback.newest ? "" : "s"} yours. Renew it to use ${version}.`,
    { extensions: { fallbackVersion: fallback.newest } },
  );
}
