import { defineRoute, type AnyRoute } from "../core/routes";
import type { Deps } from "../deps";
import { credentialOf } from "../access/policy";
import { auditPageSchema, auditParamsSchema, auditQuerySchema } from "./schemas";
import { moduleAuditPage } from "./service";

/** `GET /developers/modules/:id/audit`: who did what to one of the caller's modules. */
export const auditRoutes = (deps: Deps): AnyRoute[] => [
  defineRoute({
    method: "get",
    path: "/developers/modules/:id/audit",
    operationId: "listModuleAudit",
    summary: "The audit log of one of the caller's modules and its versions, newest first.",
    tag: "Developers",
    auth: "developer",
    publisherTokens: true,
    params: auditParamsSchema,
    query: auditQuerySchema,
    responses: { 200: { description: "One page of entries.", schema: auditPageSchema } },
    problems: ["not_owner", "module_not_found"],
    handle: async ({ caller, params, query }) => ({ status: 200, body: await moduleAuditPage(deps, caller.developer, credentialOf(caller), params.id, query) }),
  }),
];
