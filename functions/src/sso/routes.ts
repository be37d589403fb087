import { businessParamsSchema } from "../businesses/schemas";
import { defineRoute } from "../core/routes";
import type { Deps } from "../deps";
import { ssoSettingsSchema } from "./schemas";
import { getSso, putSso } from "./service";

/** A business's single sign-on (contract §22), for its owners. */
export const ssoRoutes = (deps: Deps) => [
  defineRoute({
    method: "get",
    path: "/businesses/:businessId/sso",
    operationId: "getSso",
    summary: "The business's single sign-on: provider, enforcement and just-in-time membership (owners).",
    tag: "Enterprise",
    auth: "user",
    params: businessParamsSchema,
    responses: { 200: { description: "The setting; providerId null when none is set.", schema: ssoSettingsSchema } },
    problems: ["business_not_found", "not_business_admin"],
    handle: async ({ caller, params }) => ({ status: 200, body: await getSso(deps, caller, params.businessId) }),
  }),
  defineRoute({
    method: "put",
    path: "/businesses/:businessId/sso",
    operationId: "putSso",
    summary: "Sets the business's single sign-on (owners, who keep access with any sign-in).",
    tag: "Enterprise",
    auth: "user",
    params: businessParamsSchema,
    body: ssoSettingsSchema,
    responses: { 200: { description: "The stored setting.", schema: ssoSettingsSchema } },
    problems: ["business_not_found", "not_business_admin"],
    handle: async ({ caller, actor, params, body }) => ({ status: 200, body: await putSso(deps, caller, actor, params.businessId, body) }),
  }),
];
