import { defineRoute, type AnyRoute } from "../core/routes";
import type { Deps } from "../deps";
import { oidcVerifier } from "./oidc";
import {
  addTrustedPublisherSchema,
  moduleParamsSchema,
  oidcExchangeSchema,
  publishTokenSchema,
  trustedPublisherListSchema,
  trustedPublisherParamsSchema,
  trustedPublisherSchema,
} from "./schemas";
import { addTrustedPublisher, exchangeOidcToken, listTrustedPublishers, removeTrustedPublisher } from "./service";

/**
 * Trusted publishing (§15): owners name their CI (ID token only, so a leaked publisher token
 * cannot add its own), and CI trades its OIDC token for a short-lived publish token.
 */
export const trustedPublishingRoutes = (deps: Deps): AnyRoute[] => {
  const oidc = oidcVerifier(deps.config.trustedPublishing, deps.clock, deps.config.deadlines.callMs);
  return [
    defineRoute({
      method: "post",
      path: "/developers/auth/oidc",
      operationId: "exchangeOidcToken",
      summary: "Trades a CI's OIDC ID token for a publish token (mpo_…) of the modules whose trusted publishers it matches, valid 15 minutes.",
      tag: "Developers",
      auth: "none",
      body: oidcExchangeSchema,
      // An exchange of credentials: a repeat is a new exchange, as safe as the first.
      idempotencyKey: false,
      responses: { 200: { description: "The publish token, shown once.", schema: publishTokenSchema } },
      problems: ["invalid_token", "user_disabled", "no_trusted_publisher", "unavailable"],
      handle: async ({ body }) => ({ status: 200, body: await exchangeOidcToken(deps, oidc, body.token) }),
    }),
    defineRoute({
      method: "post",
      path: "/developers/modules/:id/trusted-publishers",
      operationId: "addTrustedPublisher",
      summary: "Lets CI runs whose OIDC token matches this issuer, subject and claims publish the module, its first version too (ID token only).",
      tag: "Developers",
      auth: "developer",
      params: moduleParamsSchema,
      body: addTrustedPublisherSchema,
      responses: { 201: { description: "The trusted publisher.", schema: trustedPublisherSchema } },
      problems: ["not_owner", "namespace_mismatch"],
      handle: async ({ caller, actor, params, body }) => ({ status: 201, body: await addTrustedPublisher(deps, caller.developer, actor, params.id, body) }),
    }),
    defineRoute({
      method: "get",
      path: "/developers/modules/:id/trusted-publishers",
      operationId: "listTrustedPublishers",
      summary: "The module's trusted publishers, oldest first (ID token only).",
      tag: "Developers",
      auth: "developer",
      params: moduleParamsSchema,
      responses: { 200: { description: "The trusted publishers.", schema: trustedPublisherListSchema } },
      problems: ["not_owner", "namespace_mismatch"],
      handle: async ({ caller, params }) => ({ status: 200, body: await listTrustedPublishers(deps, caller.developer, params.id) }),
    }),
    defineRoute({
      method: "delete",
      path: "/developers/modules/:id/trusted-publishers/:tpId",
      operationId: "removeTrustedPublisher",
      summary: "Removes a trusted publisher; the publish tokens it granted stop working at once (ID token only).",
      tag: "Developers",
      auth: "developer",
      params: trustedPublisherParamsSchema,
      responses: { 204: { description: "Removed." } },
      problems: ["not_owner", "namespace_mismatch", "not_found"],
      handle: async ({ caller, actor, params }) => {
        await removeTrustedPublisher(deps, caller.developer, actor, params.id, params.tpId);
        return { status: 204 };
      },
    }),
  ];
};
