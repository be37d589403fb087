import { invalidRequest } from "../core/errors";
import { defineRoute } from "../core/routes";
import { parseRequestPart } from "../core/validation";
import type { Deps } from "../deps";
import { createAccessToken, listAccessTokens, revokeAccessToken } from "./access-tokens";
import { login, registerExistingUser, registerWithPassword, toDeveloperView } from "./accounts";
import {
  accessTokenListSchema,
  accessTokenParamsSchema,
  createAccessTokenSchema,
  createdAccessTokenSchema,
  developerSchema,
  loginBodySchema,
  refreshBodySchema,
  refreshedSchema,
  registerBodySchema,
  registeredSchema,
  registerWithPasswordSchema,
  registerWithTokenSchema,
  sessionSchema,
} from "./schemas";

export const developerRoutes = (deps: Deps) => [
  defineRoute({
    method: "post",
    path: "/developers/auth/register",
    operationId: "registerDeveloper",
    summary: "Creates a developer account: a new user (email and password), or the caller's existing user (Bearer token).",
    tag: "Developers",
    auth: "optional",
    body: registerBodySchema,
    responses: { 201: { description: "The developer account (and a session, for a new user).", schema: registeredSchema } },
    problems: ["email_exists", "publisher_taken", "already_registered"],
    shownOnce: ["idToken", "refreshToken"],
    handle: async ({ body, caller }) => {
      if (caller) {
        const input = parseRequestPart(registerWithTokenSchema, body, "body");
        return { status: 201, body: await registerExistingUser(deps, caller, input) };
      }
      if (!("email" in body)) {
        throw invalidRequest("Without a Bearer token, email and password are required.", [
          { path: "email", message: "Required." },
          { path: "password", message: "Required." },
        ]);
      }
      return { status: 201, body: await registerWithPassword(deps, parseRequestPart(registerWithPasswordSchema, body, "body")) };
    },
  }),
  defineRoute({
    method: "post",
    path: "/developers/auth/login",
    operationId: "loginDeveloper",
    summary: "Password sign-in of a developer: Firebase ID token, refresh token and its lifetime.",
    tag: "Developers",
    auth: "none",
    body: loginBodySchema,
    responses: { 200: { description: "The session.", schema: sessionSchema } },
    problems: ["invalid_credentials", "user_disabled", "not_a_developer"],
    // A sign-in changes nothing; a repeat is a new session, as safe as the first.
    idempotencyKey: false,
    handle: async ({ body }) => ({ status: 200, body: await login(deps, body.email, body.password) }),
  }),
  defineRoute({
    method: "post",
    path: "/developers/auth/refresh",
    operationId: "refreshDeveloperSession",
    summary: "Exchanges a refresh token for a new ID token (and refresh token): Firebase's secure-token exchange.",
    tag: "Developers",
    auth: "none",
    body: refreshBodySchema,
    responses: { 200: { description: "The new tokens.", schema: refreshedSchema } },
    problems: ["invalid_token", "user_disabled"],
    // An exchange of credentials: a repeat is a new exchange, as safe as the first.
    idempotencyKey: false,
    handle: async ({ body }) => {
      const { idToken, refreshToken, expiresIn } = await deps.identity.refresh(body.refreshToken);
      return { status: 200, body: { idToken, refreshToken, expiresIn } };
    },
  }),
  defineRoute({
    method: "post",
    path: "/developers/tokens",
    operationId: "createAccessToken",
    summary: "Creates a publisher access token for CI (mpt_…), shown once; it authenticates /developers/modules* only.",
    tag: "Developers",
    auth: "developer",
    body: createAccessTokenSchema,
    responses: { 201: { description: "The token, with its secret (never shown again).", schema: createdAccessTokenSchema } },
    shownOnce: ["token"],
    handle: async ({ caller, actor, body }) => ({ status: 201, body: await createAccessToken(deps, caller.developer, actor, body) }),
  }),
  defineRoute({
    method: "get",
    path: "/developers/tokens",
    operationId: "listAccessTokens",
    summary: "The caller's access tokens (never their secrets), newest first.",
    tag: "Developers",
    auth: "developer",
    responses: { 200: { description: "The tokens.", schema: accessTokenListSchema } },
    handle: async ({ caller }) => ({ status: 200, body: await listAccessTokens(deps, caller.developer) }),
  }),
  defineRoute({
    method: "delete",
    path: "/developers/tokens/:id",
    operationId: "revokeAccessToken",
    summary: "Revokes an access token at once.",
    tag: "Developers",
    auth: "developer",
    params: accessTokenParamsSchema,
    responses: { 204: { description: "Revoked." } },
    problems: ["token_not_found"],
    handle: async ({ caller, actor, params }) => {
      await revokeAccessToken(deps, caller.developer, actor, params.id);
      return { status: 204 };
    },
  }),
  defineRoute({
    method: "get",
    path: "/developers/me",
    operationId: "getDeveloper",
    summary: "The caller's developer account.",
    tag: "Developers",
    auth: "developer",
    responses: { 200: { description: "The developer.", schema: developerSchema } },
    handle: async ({ caller }) => ({ status: 200, body: toDeveloperView(caller.developer) }),
  }),
];
