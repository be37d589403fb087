import type { Provenance } from "../core/provenance";

/**
 * Trusted publishing's pure rules (contract §15): which claims of a CI's OIDC token a trusted
 * publisher may pin, when a token matches one, and what of it is kept as a version's provenance.
 */

/** The claims a trusted publisher may require, by the names GitHub Actions gives them. */
export const PINNABLE_CLAIMS = ["repository", "repository_owner", "workflow_ref", "ref", "environment"] as const;
export type PinnableClaim = (typeof PINNABLE_CLAIMS)[number];

/** Who may publish a module from CI: the token's issuer, and its subject and claims where given. */
export interface TrustedPublisherRule {
  issuer: string;
  subject: string | null;
  claims: Partial<Record<PinnableClaim, string>>;
}

/** A verified OIDC token's claims: `iss` and `sub` always; the rest as the issuer put them. */
export type OidcClaims = { iss: string; sub: string } & Record<string, unknown>;

/**
 * Whether a token matches a trusted publisher: the same issuer, and exactly the subject and every
 * claim the publisher names (case and all: `acme/app` is not `Acme/App`). A claim the token lacks,
 * or has as something other than a string, matches nothing.
 */
export function matchesRule(rule: TrustedPublisherRule, claims: OidcClaims): boolean {
  if (claims.iss !== rule.issuer) return false;
  if (rule.subject !== null && claims.sub !== rule.subject) return false;
  return Object.entries(rule.claims).every(([name, value]) => claims[name] === value);
}

const text = (value: unknown): string | undefined => (typeof value === "string" && value.length > 0 ? value : undefined);
/** Run ids: GitHub's are strings, GitLab's numbers. */
const runIdText = (value: unknown) => (Number.isSafeInteger(value) ? String(value) : text(value));

/**
 * What built a version, from the claims that exist: GitHub Actions' names first, GitLab CI's
 * (`project_path`, `ci_config_ref_uri`, `pipeline_id`) where GitHub's are absent.
 */
export function provenanceOf(claims: OidcClaims): Provenance {
  const fields = {
    repository: text(claims.repository) ?? text(claims.project_path),
    workflowRef: text(claims.workflow_ref) ?? text(claims.ci_config_ref_uri),
    ref: text(claims.ref),
    sha: text(claims.sha),
    runId: runIdText(claims.run_id) ?? runIdText(claims.pipeline_id),
  };
  return {
    issuer: claims.iss,
    subject: claims.sub,
    ...Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)),
  };
}
