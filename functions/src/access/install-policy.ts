import semver from "semver";

/**
 * A business's install policy (§26), as pure rules: which versions of which modules its members
 * may install. Nothing here reads or writes; the clock is not needed.
 */

export const POLICY_MODES = ["open", "allowlist"] as const;
type PolicyMode = (typeof POLICY_MODES)[number];

export interface PolicyRule {
  effect: "allow" | "block";
  publisher?: string;
  module?: string;
  /** A semver range (npm's syntax). */
  versions?: string;
  reason?: string;
}

/** What decides: the policy's content, without its bookkeeping (version, updatedAt). */
export interface PolicyContent {
  mode: PolicyMode;
  rules: PolicyRule[];
  minimumVersions: Record<string, string>;
  required: string[];
  message: string | null;
}

export interface Policy extends PolicyContent {
  businessId: string;
  /** Grows by one per change. */
  version: number;
  updatedAt: Date;
}

/** What a business's document keeps of its policy, read with every member's request: whether there is one, and what `/users/me` shows of it. */
export type PolicySummary = Pick<Policy, "version" | "mode" | "required" | "message">;

/** The module a decision is about: its id, its publisher and, for a private module, its business. */
export interface PolicySubject {
  id: string;
  publisherId: string;
  /** The business a private module belongs to (§26), else null. */
  businessId: string | null;
}

export interface PolicyDecision {
  allowed: boolean;
  /** The rule that decided, or null: no rule matched (the mode decided), or a minimum version did. */
  rule: PolicyRule | null;
  /** Why a version is not allowed: the rule's reason, else the policy's message, else what decided. */
  reason?: string;
}

/**
 * How specific a rule is (higher wins): module + range > module > publisher + range > publisher.
 * A rule naming both a module and its publisher is as specific as one naming the module.
 */
function specificity(rule: PolicyRule): number {
  return (rule.module !== undefined ? 2 : 0) + (rule.versions !== undefined ? 1 : 0);
}

/** Whether a version satisfies a range, prereleases included (a policy that blocks `<2` blocks `1.5.0-beta`). */
function inRange(version: string, range: string): boolean {
  return semver.satisfies(version, range, { includePrerelease: true });
}

function ruleMatches(rule: PolicyRule, subject: PolicySubject, version: string): boolean {
  if (rule.module !== undefined && rule.module !== subject.id) return false;
  if (rule.publisher !== undefined && rule.publisher !== subject.publisherId) return false;
  return rule.versions === undefined || inRange(version, rule.versions);
}

/**
 * The rule that decides a version: the most specific of those that match, `block` winning at equal
 * specificity (the first such rule as listed, so that the answer is stable); null when none matches.
 */
export function decidingRule(rules: readonly PolicyRule[], subject: PolicySubject, version: string): PolicyRule | null {
  let best: PolicyRule | null = null;
  for (const rule of rules) {
    if (!ruleMatches(rule, subject, version)) continue;
    if (best === null) {
      best = rule;
      continue;
    }
    const [candidate, held] = [specificity(rule), specificity(best)];
    if (candidate > held || (candidate === held && rule.effect === "block" && best.effect === "allow")) best = rule;
  }
  return best;
}

/**
 * Whether the business lets its members install this version: the deciding rule allows it, or no
 * rule matches and the mode is open or the module is the business's own; and it is not below the
 * module's minimum version.
 */
export function decide(policy: PolicyContent & { businessId: string }, subject: PolicySubject, version: string): PolicyDecision {
  const minimum = policy.minimumVersions[subject.id];
  if (minimum !== undefined && semver.lt(version, minimum)) {
    return { allowed: false, rule: null, reason: `Versions of ${subject.id} below ${minimum} are not allowed${policy.message ? `: ${policy.message}` : "."}` };
  }
  const rule = decidingRule(policy.rules, subject, version);
  if (rule) return rule.effect === "allow" ? { allowed: true, rule } : { allowed: false, rule, reason: rule.reason ?? policy.message ?? `${subject.id} ${version} is blocked.` };
  if (policy.mode === "open" || subject.businessId === policy.businessId) return { allowed: true, rule: null };
  return { allowed: false, rule: null, reason: policy.message ?? `${subject.id} is not on the business's list of allowed modules.` };
}

/** The first of several businesses' policies that does not allow a version, with its decision; null when every one allows it. */
export function firstRefusal<P extends PolicyContent & { businessId: string }>(policies: readonly P[], subject: PolicySubject, version: string): { policy: P; decision: PolicyDecision } | null {
  for (const policy of policies) {
    const decision = decide(policy, subject, version);
    if (!decision.allowed) return { policy, decision };
  }
  return null;
}

/** What a module is to policies: its id, its publisher, and the business it is private to (§26). */
export const policySubject = (module: { id: string; publisherId: string; businessId?: string | null }): PolicySubject => ({
  id: module.id,
  publisherId: module.publisherId,
  businessId: module.businessId ?? null,
});
