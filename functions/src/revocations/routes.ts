import { defineRoute, type AnyRoute } from "../core/routes";
import type { Deps } from "../deps";
import { businessParamsSchema } from "../businesses/schemas";
import { signedRevocationListSchema } from "./schemas";
import { signedBusinessRevocationList, signedRevocationList } from "./service";

/** `GET /revocations` and a business's own (§26): the signed lists the desktop app checks before loading any module, even offline. */
export const revocationRoutes = (deps: Deps): AnyRoute[] => [
  defineRoute({
    method: "get",
    path: "/revocations",
    signedAnswers: true,
    operationId: "getRevocations",
    summary: "The signed list of revoked module versions; its serial grows at every change and it expires within 7 days.",
    tag: "Marketplace",
    auth: "none",
    responses: { 200: { description: "The list, as a compact JWS.", schema: signedRevocationListSchema } },
    cache: "public",
    handle: async () => ({ status: 200, body: await signedRevocationList(deps) }),
  }),
  defineRoute({
    method: "get",
    path: "/businesses/:businessId/revocations",
    signedAnswers: true,
    operationId: "getBusinessRevocations",
    summary: "The signed list of the business's private modules' revoked versions (any member, §26): the public list leaves them out.",
    tag: "Businesses",
    auth: "user",
    params: businessParamsSchema,
    responses: { 200: { description: "The list, as a compact JWS whose payload adds businessId.", schema: signedRevocationListSchema } },
    problems: ["business_not_found", "sso_required"],
    handle: async ({ caller, params }) => ({ status: 200, body: await signedBusinessRevocationList(deps, caller, params.businessId) }),
  }),
];
