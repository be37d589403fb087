import { readBodyBytes } from "../core/body";
import { concurrencyLimit } from "../core/concurrency";
import { defineRoute } from "../core/routes";
import type { Deps } from "../deps";
import { PACKAGE_CONTENT_TYPES } from "./package";
import { listDeveloperModules, moduleDownloadStats, publishVersion, setYanked, signPackage } from "./service";
import {
  developerModulesSchema,
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
      accessTokens: true,
      rawBody: { contentTypes: PACKAGE_CONTENT_TYPES, description: "The .mpkg file (a ZIP with module.json at its root)." },
      responses: { 201: { description: "The signed version.", schema: signedVersionSchema } },
      problems: ["namespace_mismatch", "not_owner", "version_already_published", "invalid_package", "package_rejected", "unavailable"],
      handle: async ({ caller, actor, req }) => ({
        status: 201,
        body: await signs.run(async () => signPackage(deps, { ...caller.developer, actor }, await readBodyBytes(req, deps.config.maxPackageBytes)), deps.config.deadlines.requestMs),
      }),
    }),
    defineRoute({
      method: "post",
      path: "/developers/modules/publish",
      operationId: "publishModuleVersion",
      summary: "Publishes a signed version: it becomes the module's latest in the marketplace.",
      tag: "Developers",
      auth: "developer",
      accessTokens: true,
      body: publishBodySchema,
      responses: { 200: { description: "The module and the published version.", schema: publishedSchema } },
      problems: ["not_owner", "version_not_found", "version_already_published", "version_not_newer", "under_review"],
      handle: async ({ caller, actor, body }) => ({
        status: 200,
        body: await publishVersion(deps, { ...caller.developer, actor }, body.moduleId, body.version),
      }),
    }),
    defineRoute({
      method: "get",
      path: "/developers/modules",
      operationId: "listDeveloperModules",
      summary: "The caller's modules, with every version, its state and the download count.",
      tag: "Developers",
      auth: "developer",
      accessTokens: true,
      responses: { 200: { description: "The modules.", schema: developerModulesSchema } },
      handle: async ({ caller, actor }) => ({ status: 200, body: await listDeveloperModules(deps, { ...caller.developer, actor }) }),
    }),
    defineRoute({
      method: "post",
      path: "/developers/modules/yank",
      operationId: "yankModuleVersion",
      summary: "Withdraws a published version: never the latest or a compatible version again, still downloadable by explicit version.",
      tag: "Developers",
      auth: "developer",
      accessTokens: true,
      body: yankBodySchema,
      responses: { 200: { description: "The yanked version.", schema: yankedSchema } },
      problems: ["not_owner", "version_not_found"],
      handle: async ({ caller, actor, body }) => ({
        status: 200,
        body: await setYanked(deps, { ...caller.developer, actor }, body.moduleId, body.version, { reason: body.reason }),
      }),
    }),
    defineRoute({
      method: "post",
      path: "/developers/modules/unyank",
      operationId: "unyankModuleVersion",
      summary: "Puts a yanked version back.",
      tag: "Developers",
      auth: "developer",
      accessTokens: true,
      body: unyankBodySchema,
      responses: { 200: { description: "The version, no longer yanked.", schema: yankedSchema } },
      problems: ["not_owner", "version_not_found"],
      handle: async ({ caller, actor, body }) => ({ status: 200, body: await setYanked(deps, { ...caller.developer, actor }, body.moduleId, body.version, null) }),
    }),
    defineRoute({
      method: "get",
      path: "/developers/modules/:id/stats",
      operationId: "getModuleDownloadStats",
      summary: "Downloads of one of the caller's modules per UTC day and version (default: the last 30 days).",
      tag: "Developers",
      auth: "developer",
      accessTokens: true,
      params: statsParamsSchema,
      query: statsQuerySchema,
      responses: { 200: { description: "Every day of the range, zeros included.", schema: downloadStatsSchema } },
      problems: ["not_owner", "module_not_found"],
      handle: async ({ caller, params, query }) => ({ status: 200, body: await moduleDownloadStats(deps, caller.developer.id, params.id, query) }),
    }),
  ];
};
