import { defineRoute } from "../core/routes";
import type { Deps } from "../deps";
import { businessParamsSchema } from "../businesses/schemas";
import { evaluateBodySchema, evaluationSchema, policyBodySchema, policySchema, signedPolicySchema } from "./schemas";
import { evaluatePolicy, getPolicy, putPolicy, signedPolicy } from "./service";

/** A business's install policy (contract §26). */
export const policyRoutes = (deps: Deps) => [
  defineRoute({
    method: "get",
    path: "/businesses/:businessId/policy",
    operationId: "getPolicy",
    summary: "The business's install policy (any member); version 0 when it never set one.",
    tag: "Businesses",
    auth: "user",
    params: businessParamsSchema,
    responses: { 200: { description: "The policy.", schema: policySchema } },
    problems: ["business_not_found"],
    handle: async ({ caller, params }) => ({ status: 200, body: await getPolicy(deps, caller, params.businessId) }),
  }),
  defineRoute({
    method: "put",
    path: "/businesses/:businessId/policy",
    operationId: "putPolicy",
    summary: "Sets the business's install policy as a whole (owners and admins): mode, rules, minimum versions, required modules, message.",
    tag: "Businesses",
    auth: "user",
    params: businessParamsSchema,
    body: policyBodySchema,
    responses: { 200: { description: "The policy, its version one higher.", schema: policySchema } },
    problems: ["business_not_found", "not_business_admin"],
    handle: async ({ caller, actor, params, body }) => ({ status: 200, body: await putPolicy(deps, caller, actor, params.businessId, body) }),
  }),
  defineRoute({
    method: "post",
    path: "/businesses/:businessId/policy/evaluate",
    operationId: "evaluatePolicy",
    summary: "Whether the policy allows a module's version (or which is the newest it allows), and the rule that decides (owners and admins).",
    tag: "Businesses",
    auth: "user",
    params: businessParamsSchema,
    body: evaluateBodySchema,
    // A question, not a change.
    idempotencyKey: false,
    responses: { 200: { description: "The decision.", schema: evaluationSchema } },
    problems: ["business_not_found", "not_business_admin", "module_not_found"],
    handle: async ({ caller, params, body }) => ({ status: 200, body: await evaluatePolicy(deps, caller, params.businessId, body) }),
  }),
  defineRoute({
    method: "get",
    path: "/businesses/:businessId/policy/signed",
    operationId: "getSignedPolicy",
    summary: "The policy as a compact JWS (typ policy+jwt) under the module signing key, for the desktop app to enforce offline (any member).",
    tag: "Businesses",
    auth: "user",
    params: businessParamsSchema,
    responses: { 200: { description: "The signed policy.", schema: signedPolicySchema } },
    problems: ["business_not_found"],
    handle: async ({ caller, params }) => ({ status: 200, body: await signedPolicy(deps, caller, params.businessId) }),
  }),
];
