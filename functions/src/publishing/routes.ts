import type { Request } from "express";
import { readBodyBytes } from "../core/body";
import { ApiError } from "../core/errors";
import { concurrencyLimit } from "../core/concurrency";
import { defineRoute } from "../core/routes";
import type { Deps } from "../deps";
import { PACKAGE_CONTENT_TYPES } from "./package";
import { publisherOf } from "./publisher";
import { publishVersion, setPublishPolicy, setYanked, signPackage } from "./service";
import { listDeveloperModules, moduleDownloadStats } from "./views";
import {
  developerModulesSchema,
  policyBodySchema,
  policyParamsSchema,
  policySchema,
  downloadStatsSchema,
  publishBodySchema,
  publishedSchema,
  signedVersionSchema,
  statsParamsSchema,
  statsQuerySchema,
  unyankBodySchema,
  yankBodySchema,
  yankedSchema,
} from "./schemas";

const MAX_AUTHOR_SIGNATURE_LENGTH = 4096;

/** `/developers/modules*`: a developer's modules, from package to marketplace; an ID token or a publisher access token. */
export const publishingRoutes = (deps: Deps) => {
  // Each sign holds a package (up to MAX_PACKAGE_BYTES) and its inspection in memory.
  const signs = concurrencyLimit(deps.config.maxConcurrentSigns, "package uploads");
  return [
    defineRoute({
      method: "post",
      path: "/developers/modules/sign",
      operationId: "signModulePackage",
      summary: "Validates, checks (secrets, blocklist, look-alike names), stores and signs a module package (.mpkg), sent as raw bytes.",
      tag: "Developers",
      auth: "developer",
      publisherTokens: true,
      rawBody: { contentTypes: PACKAGE_CONTENT_TYPES, description: "The .mpkg file (a ZIP with module.json at its root).", maxBytes: deps.config.maxPackageBytes },
      responses: { 201: { description: "The signed version.", schema: signedVersionSchema } },
      description:
        "Optional header `X-Author-Signature`: the author's compact JWS (alg EdDSA, kid an active key of GET /publishers/:publisherId/keys) over { moduleId, version, sha256 } of this package; required when the module's policy says so.",
      problems: ["namespace_mismatch", "not_owner", "version_already_published", "invalid_package", "package_rejected", "invalid_author_signature", "policy_violation", "unavailable"],
      handle: async ({ caller, actor, req }) => ({
        status: 201,
        body: await signs.run(
          async () => signPackage(deps, publisherOf(caller, actor), await readBodyBytes(req, deps.config.maxPackageBytes), authorSignatureOf(req)),
          deps.config.deadlines.requestMs,
        ),
      }),
    }),
    defineRoute({
      method: "post",
      path: "/developers/modules/publish",
      operationId: "publishModuleVersion",
      summary: "Publishes a signed version: it becomes the module's latest in the marketplace.",
      tag: "Developers",
      auth: "developer",
      publisherTokens: true,
      body: publishBodySchema,
      responses: { 200: { description: "The module and the published version.", schema: publishedSchema } },
      problems: ["not_owner", "version_not_found", "version_already_published", "version_not_newer", "under_review", "policy_violation"],
      handle: async ({ caller, actor, body }) => ({
        status: 200,
        body: await publishVersion(deps, publisherOf(caller, actor), body.moduleId, body.version),
      }),
    }),
    defineRoute({
      method: "get",
      path: "/developers/modules",
      operationId: "listDeveloperModules",
      summary: "The caller's modules, with every version, its state and the download count.",
      tag: "Developers",
      auth: "developer",
      publisherTokens: true,
      responses: { 200: { description: "The modules.", schema: developerModulesSchema } },
      handle: async ({ caller, actor }) => ({ status: 200, body: await listDeveloperModules(deps, publisherOf(caller, actor)) }),
    }),
    defineRoute({
      method: "post",
      path: "/developers/modules/yank",
      operationId: "yankModuleVersion",
      summary: "Withdraws a published version: never the latest or a compatible version again, still downloadable by explicit version.",
      tag: "Developers",
      auth: "developer",
      publisherTokens: true,
      body: yankBodySchema,
      responses: { 200: { description: "The yanked version.", schema: yankedSchema } },
      problems: ["not_owner", "version_not_found", "policy_violation"],
      handle: async ({ caller, actor, body }) => ({
        status: 200,
        body: await setYanked(deps, publisherOf(caller, actor), body.moduleId, body.version, { reason: body.reason }),
      }),
    }),
    defineRoute({
      method: "post",
      path: "/developers/modules/unyank",
      operationId: "unyankModuleVersion",
      summary: "Puts a yanked version back.",
      tag: "Developers",
      auth: "developer",
      publisherTokens: true,
      body: unyankBodySchema,
      responses: { 200: { description: "The version, no longer yanked.", schema: yankedSchema } },
      problems: ["not_owner", "version_not_found", "policy_violation"],
      handle: async ({ caller, actor, body }) => ({ status: 200, body: await setYanked(deps, publisherOf(caller, actor), body.moduleId, body.version, null) }),
    }),
    defineRoute({
      method: "get",
      path: "/developers/modules/:id/stats",
      operationId: "getModuleDownloadStats",
      summary: "Downloads of one of the caller's modules per UTC day and version (default: the last 30 days).",
      tag: "Developers",
      auth: "developer",
      publisherTokens: true,
      params: statsParamsSchema,
      query: statsQuerySchema,
      responses: { 200: { description: "Every day of the range, zeros included.", schema: downloadStatsSchema } },
      problems: ["not_owner", "module_not_found"],
      handle: async ({ caller, actor, params, query }) => ({ status: 200, body: await moduleDownloadStats(deps, publisherOf(caller, actor), params.id, query) }),
    }),
    defineRoute({
      method: "put",
      path: "/developers/modules/:id/policy",
      operationId: "setModulePublishPolicy",
      summary: "Sets what every sign, publish, yank and unyank of the module requires (ID token only: a leaked publisher token cannot lift it).",
      tag: "Developers",
      auth: "developer",
      params: policyParamsSchema,
      body: policyBodySchema,
      responses: { 200: { description: "The policy now in force.", schema: policySchema } },
      problems: ["module_not_found", "not_owner"],
      handle: async ({ caller, actor, params, body }) => ({ status: 200, body: await setPublishPolicy(deps, caller.developer, actor, params.id, body) }),
    }),
  ];
};

/** The X-Author-Signature header, if sent: at most one, of a sane length. */
function authorSignatureOf(req: Request): string | undefined {
  const value = req.get("x-author-signature");
  if (value === undefined) return undefined;
  if (value.length === 0 || value.length > MAX_AUTHOR_SIGNATURE_LENGTH) {
    throw new ApiError("invalid_author_signature", `X-Author-Signature must be a compact JWS of at most ${MAX_AUTHOR_SIGNATURE_LENGTH} characters.`);
  }
  return value.trim();
}
