import { businessParamsSchema } from "../businesses/schemas";
import { defineRoute } from "../core/routes";
import type { Deps } from "../deps";
import { createdScimTokenSchema, newScimTokenSchema, scimSettingsSchema, scimTokenListSchema, scimTokenParamsSchema, storedScimSettingsSchema } from "./schemas";
import { getScimSettings, putScimSettings } from "./settings";
import { createScimToken, listScimTokens, revokeScimToken } from "./tokens";

/** A business's SCIM connection (contract §22), for its owners: tokens and the groups' meaning. SCIM itself is protocol.ts. */
export const scimRoutes = (deps: Deps) => [
  defineRoute({
    method: "post",
    path: "/businesses/:businessId/scim/tokens",
    operationId: "createScimToken",
    summary: "Makes a SCIM token for the business's identity provider, shown this once (owners).",
    tag: "Enterprise",
    auth: "user",
    params: businessParamsSchema,
    body: newScimTokenSchema,
    shownOnce: ["token"],
    responses: { 201: { description: "The token and the SCIM base URL; a replay under an Idempotency-Key answers `token: null`.", schema: createdScimTokenSchema } },
    problems: ["business_not_found", "not_business_admin", "sso_required", "too_many_scim_tokens"],
    handle: async ({ caller, actor, params, body }) => ({ status: 201, body: await createScimToken(deps, caller, actor, params.businessId, body.name) }),
  }),
  defineRoute({
    method: "get",
    path: "/businesses/:businessId/scim/tokens",
    operationId: "listScimTokens",
    summary: "The business's SCIM tokens, never the tokens themselves (owners).",
    tag: "Enterprise",
    auth: "user",
    params: businessParamsSchema,
    responses: { 200: { description: "The tokens, newest first, and the SCIM base URL.", schema: scimTokenListSchema } },
    problems: ["business_not_found", "not_business_admin", "sso_required"],
    handle: async ({ caller, params }) => ({ status: 200, body: await listScimTokens(deps, caller, params.businessId) }),
  }),
  defineRoute({
    method: "delete",
    path: "/businesses/:businessId/scim/tokens/:tokenId",
    operationId: "revokeScimToken",
    summary: "Revokes a SCIM token: it stops working at once (owners).",
    tag: "Enterprise",
    auth: "user",
    params: scimTokenParamsSchema,
    responses: { 204: { description: "Revoked." } },
    problems: ["business_not_found", "not_business_admin", "sso_required", "scim_token_not_found"],
    handle: async ({ caller, actor, params }) => {
      await revokeScimToken(deps, caller, actor, params.businessId, params.tokenId);
      return { status: 204 };
    },
  }),
  defineRoute({
    method: "get",
    path: "/businesses/:businessId/scim/settings",
    operationId: "getScimSettings",
    summary: "Which SCIM groups make admins and which hold seats (owners).",
    tag: "Enterprise",
    auth: "user",
    params: businessParamsSchema,
    responses: { 200: { description: "The settings.", schema: storedScimSettingsSchema } },
    problems: ["business_not_found", "not_business_admin", "sso_required"],
    handle: async ({ caller, params }) => ({ status: 200, body: await getScimSettings(deps, caller, params.businessId) }),
  }),
  defineRoute({
    method: "put",
    path: "/businesses/:businessId/scim/settings",
    operationId: "putScimSettings",
    summary: "Sets which SCIM groups make admins and which hold seats; roles and seats follow at once (owners).",
    tag: "Enterprise",
    auth: "user",
    params: businessParamsSchema,
    body: scimSettingsSchema,
    responses: { 200: { description: "The stored settings.", schema: storedScimSettingsSchema } },
    problems: ["business_not_found", "not_business_admin", "sso_required"],
    handle: async ({ caller, actor, params, body }) => ({ status: 200, body: await putScimSettings(deps, caller, actor, params.businessId, body) }),
  }),
];
