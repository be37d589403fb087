import { defineRoute, type AnyRoute } from "../core/routes";
import type { Deps } from "../deps";
import { addAuthorKeySchema, authorKeyListSchema, authorKeySchema, kidParamsSchema, publisherKeysSchema, publisherParamsSchema } from "./schemas";
import { addAuthorKey, listAuthorKeys, publisherKeys, revokeAuthorKey } from "./service";

/** Author keys (§15): managed with an ID token only; listed publicly per publisher. */
export const authorKeyRoutes = (deps: Deps): AnyRoute[] => [
  defineRoute({
    method: "post",
    path: "/developers/keys",
    operationId: "addAuthorKey",
    summary: "Registers a public Ed25519 key of the caller's publisher for author signatures (at most 10 active).",
    tag: "Developers",
    auth: "developer",
    body: addAuthorKeySchema,
    problems: ["author_key_exists"],
    responses: { 201: { description: "The key, with its id (the kid of its signatures).", schema: authorKeySchema } },
    handle: async ({ caller, actor, body }) => ({ status: 201, body: await addAuthorKey(deps, caller.developer, actor, body) }),
  }),
  defineRoute({
    method: "get",
    path: "/developers/keys",
    operationId: "listAuthorKeys",
    summary: "The caller's publisher's author keys, revoked ones included, oldest first.",
    tag: "Developers",
    auth: "developer",
    responses: { 200: { description: "The keys.", schema: authorKeyListSchema } },
    handle: async ({ caller }) => ({ status: 200, body: await listAuthorKeys(deps, caller.developer) }),
  }),
  defineRoute({
    method: "delete",
    path: "/developers/keys/:kid",
    operationId: "revokeAuthorKey",
    summary: "Revokes an author key: packages signed with it are refused from now on; earlier signatures stand.",
    tag: "Developers",
    auth: "developer",
    params: kidParamsSchema,
    responses: { 204: { description: "Revoked (or revoked already)." } },
    problems: ["not_found"],
    handle: async ({ caller, actor, params }) => {
      await revokeAuthorKey(deps, caller.developer, actor, params.kid);
      return { status: 204 };
    },
  }),
  defineRoute({
    method: "get",
    path: "/publishers/:publisherId/keys",
    operationId: "getPublisherKeys",
    summary: "A publisher's public author keys (JWKs), to verify the authorSignature of its packages.",
    tag: "Marketplace",
    auth: "none",
    params: publisherParamsSchema,
    responses: { 200: { description: "The keys, revoked ones with revokedAt.", schema: publisherKeysSchema } },
    cache: "public",
    problems: ["not_found"],
    handle: async ({ params }) => ({ status: 200, body: await publisherKeys(deps, params.publisherId) }),
  }),
];
