import { readBodyBytes } from "../core/body";
import { invalidRequest } from "../core/errors";
import { defineRoute } from "../core/routes";
import { parseRequestPart } from "../core/validation";
import type { Deps } from "../deps";
import { login, registerExistingUser, registerWithPassword, toDeveloperView } from "./accounts";
import { PACKAGE_CONTENT_TYPES } from "./package";
import { listDeveloperModules, publishVersion, signPackage } from "./publishing";
import {
  developerModulesSchema,
  developerSchema,
  loginBodySchema,
  publishBodySchema,
  publishedSchema,
  registerBodySchema,
  registeredSchema,
  registerWithPasswordSchema,
  registerWithTokenSchema,
  sessionSchema,
  signedVersionSchema,
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
    handle: async ({ body }) => ({ status: 200, body: await login(deps, body.email, body.password) }),
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
  defineRoute({
    method: "post",
    path: "/developers/modules/sign",
    operationId: "signModulePackage",
    summary: "Validates, stores and signs a module package (.mpkg), sent as raw bytes.",
    tag: "Developers",
    auth: "developer",
    rawBody: { contentTypes: PACKAGE_CONTENT_TYPES, description: "The .mpkg file (a ZIP with module.json at its root)." },
    responses: { 201: { description: "The signed version.", schema: signedVersionSchema } },
    problems: ["namespace_mismatch", "not_owner", "version_already_published", "invalid_package"],
    handle: async ({ caller, req }) => ({
      status: 201,
      body: await signPackage(deps, caller.developer, await readBodyBytes(req, deps.config.maxPackageBytes)),
    }),
  }),
  defineRoute({
    method: "post",
    path: "/developers/modules/publish",
    operationId: "publishModuleVersion",
    summary: "Publishes a signed version: it becomes the module's latest in the marketplace.",
    tag: "Developers",
    auth: "developer",
    body: publishBodySchema,
    responses: { 200: { description: "The module and the published version.", schema: publishedSchema } },
    problems: ["not_owner", "version_not_found", "version_already_published", "version_not_newer"],
    handle: async ({ caller, body }) => ({
      status: 200,
      body: await publishVersion(deps, caller.developer, body.moduleId, body.version),
    }),
  }),
  defineRoute({
    method: "get",
    path: "/developers/modules",
    operationId: "listDeveloperModules",
    summary: "The caller's modules, with every version, its state and the download count.",
    tag: "Developers",
    auth: "developer",
    responses: { 200: { description: "The modules.", schema: developerModulesSchema } },
    handle: async ({ caller }) => ({ status: 200, body: await listDeveloperModules(deps, caller.developer) }),
  }),
];
