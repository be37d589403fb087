import type { z } from "zod";
import { moduleNotFound } from "../access/visibility";
import { decide, policySubject, type Policy } from "../access/install-policy";
import { businessStore } from "../accounts/business-store";
import { policyStore } from "../accounts/policy-store";
import { auditLog, type Actor } from "../core/audit-log";
import { outboundEvent } from "../core/event-types";
import { toIso } from "../core/documents";
import type { Deps } from "../deps";
import { inBusinessTransaction, readBusiness, requireAdmin, requireMember, type MemberCaller } from "../businesses/membership";
import { moduleStore } from "../marketplace/module-store";
import { chooseVersion } from "../marketplace/versions";
import type { evaluateBodySchema, policyBodySchema } from "./schemas";

/**
 * A business's install policy (§26): its owners and admins set it, every member reads it (and
 * its signed form, for the desktop app to enforce offline). Enforcement is where modules are
 * installed (marketplace/, activations/), from the policies caller-data reads with the member.
 */

/** The `typ` of a signed policy: neither a package signature nor a certificate passes for one. */
export const POLICY_TYPE = "policy+jwt";

/** A business that never set a policy: open, no rules, version 0. */
const unset = (businessId: string): Policy => ({ businessId, mode: "open", rules: [], minimumVersions: {}, required: [], message: null, version: 0, updatedAt: new Date(0) });

export function policyView(policy: Policy) {
  return {
    businessId: policy.businessId,
    mode: policy.mode,
    rules: policy.rules,
    minimumVersions: { ...policy.minimumVersions },
    required: policy.required,
    message: policy.message,
    version: policy.version,
    updatedAt: policy.version === 0 ? null : toIso(policy.updatedAt),
  };
}

async function memberPolicy(deps: Deps, caller: MemberCaller, businessId: string): Promise<Policy> {
  const [state, policy] = await Promise.all([readBusiness(deps, null, businessId, caller.uid), policyStore(deps.db).get(null, businessId)]);
  requireMember(state, caller, businessId);
  return policy ?? unset(businessId);
}

/** GET /businesses/:id/policy (any member). */
export async function getPolicy(deps: Deps, caller: MemberCaller, businessId: string) {
  return policyView(await memberPolicy(deps, caller, businessId));
}

/** PUT /businesses/:id/policy (owners and admins): the whole policy, its version one higher; an audit entry and `business.policy.updated`. */
export async function putPolicy(deps: Deps, caller: MemberCaller, actor: Actor, businessId: string, body: z.output<typeof policyBodySchema>) {
  const policies = policyStore(deps.db);
  const now = deps.clock();
  const written = await inBusinessTransaction(
    deps,
    businessId,
    async (tx, state) => {
      requireAdmin(state, caller, businessId, "set its install policy");
      const current = await policies.get(tx, businessId);
      // Module ids are caller-chosen: kept on an object without a prototype.
      const minimumVersions: Record<string, string> = Object.create(null);
      for (const [moduleId, version] of Object.entries(body.minimumVersions)) minimumVersions[moduleId] = version;
      const policy: Policy = { businessId, mode: body.mode, rules: body.rules, minimumVersions, required: body.required, message: body.message, version: (current?.version ?? 0) + 1, updatedAt: now };
      policies.setIn(tx, policy);
      businessStore(deps.db).setPolicySummary(tx, businessId, policy);
      auditLog(deps.db).record(
        tx,
        actor,
        {
          action: "business.policy.update",
          target: businessId,
          details: { version: policy.version, mode: policy.mode, rules: policy.rules.length, required: policy.required.length },
          emits: [outboundEvent("business.policy.updated", [{ kind: "business", id: businessId }], { businessId, version: policy.version, mode: policy.mode, path: `/businesses/${businessId}/policy` })],
        },
        now,
      );
      return policy;
    },
    { uid: caller.uid },
  );
  return policyView(written);
}

/**
 * POST /businesses/:id/policy/evaluate (owners and admins): whether the policy allows a version of
 * a module, or, without a version, which is the newest it allows, and what decided.
 */
export async function evaluatePolicy(deps: Deps, caller: MemberCaller, businessId: string, body: z.output<typeof evaluateBodySchema>) {
  const [state, stored, module] = await Promise.all([readBusiness(deps, null, businessId, caller.uid), policyStore(deps.db).get(null, businessId), moduleStore(deps.db).getModule(body.moduleId)]);
  requireAdmin(state, caller, businessId, "evaluate its install policy");
  // Another business's private module does not exist here (§26), as for any outsider.
  if (!module || !module.listed || (module.businessId !== null && module.businessId !== businessId)) throw moduleNotFound(body.moduleId);
  const policy = stored ?? unset(businessId);
  const subject = policySubject(module);
  // Without a version: the one a download would serve (yanked and revoked versions are never
  // chosen), else the newest such, to name what refuses it.
  const version = body.version ?? chooseVersion(module.versionSummary, undefined, (candidate) => decide(policy, subject, candidate).allowed) ?? chooseVersion(module.versionSummary);
  if (version === null) throw moduleNotFound(body.moduleId);
  const decision = decide(policy, subject, version);
  return {
    allowed: decision.allowed,
    version: decision.allowed || body.version ? version : null,
    rule: decision.rule,
    ...(decision.reason ? { reason: decision.reason } : {}),
  };
}

/** GET /businesses/:id/policy/signed (any member): the policy as a compact JWS under the module signing key, for offline enforcement. */
export async function signedPolicy(deps: Deps, caller: MemberCaller, businessId: string) {
  const policy = policyView(await memberPolicy(deps, caller, businessId));
  const jws = await deps.signingKeys.sign({ ...policy, iat: Math.floor(deps.clock().getTime() / 1000) }, { typ: POLICY_TYPE });
  return { jws };
}
