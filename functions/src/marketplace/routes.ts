import { loadCallerData, loadUserAccess, type AccessSubject } from "../accounts/caller-data";
import { catalogCache, MODULES_TOPIC } from "../core/catalog-changes";
import { defineRoute } from "../core/routes";
import type { Deps } from "../deps";
import {
  downloadParamsSchema,
  downloadQuerySchema,
  downloadSchema,
  moduleListQuerySchema,
  moduleListSchema,
  moduleUpdatesSchema,
  updatesBodySchema,
} from "./schemas";
import { marketplaceSearch, type SearchCatalog } from "./search-catalog";
import { checkModuleUpdates, downloadModule, downloadReads, listModules, withAccess } from "./service";

export const moduleRoutes = (deps: Deps) => {
  const callerData = (caller: AccessSubject) => loadCallerData(deps.db, caller, deps.clock());
  const callerAccess = (caller: AccessSubject) => loadUserAccess(deps.db, caller, deps.clock());
  const { lookup, downloads } = downloadReads(deps);
  // A page of the listing is the same for everyone (only access flags differ): a warm instance
  // serves pages from memory, current with the catalog's change feed, and adds the caller's flags.
  const pages = catalogCache<Awaited<ReturnType<typeof listModules>>>(deps.db, { ttlMs: deps.config.memoryCacheMs, maxEntries: 256 });
  // Built on first use: declaring the routes touches no backend.
  let catalog: SearchCatalog | undefined;
  const search = () => (catalog ??= marketplaceSearch(deps));
  return [
    defineRoute({
      method: "get",
      path: "/modules",
      operationId: "listModules",
      summary: "Finds modules: any-text search, filters, sorts and facets over the modules with a published version; with a token, each says whether the caller may use it.",
      tag: "Marketplace",
      auth: "optional",
      query: moduleListQuerySchema,
      responses: { 200: { description: "A page of modules.", schema: moduleListSchema } },
      cache: "public-anonymous",
      handle: async ({ query, caller }) => {
        const page = await pages.get(JSON.stringify(query), MODULES_TOPIC, () => listModules(deps, search(), query));
        return { status: 200, body: caller ? withAccess(page, await callerData(caller)) : page };
      },
    }),
    defineRoute({
      method: "get",
      path: "/modules/download/:id",
      signedAnswers: true,
      operationId: "downloadModule",
      summary: "A short-lived signed URL of a module package, with its hash and signature; counts a download.",
      tag: "Marketplace",
      auth: "user",
      params: downloadParamsSchema,
      query: downloadQuerySchema,
      responses: { 200: { description: "Where to download, and how to verify it.", schema: downloadSchema } },
      problems: ["not_entitled", "module_not_found", "version_not_found", "no_compatible_version", "module_revoked"],
      handle: async ({ params, query, caller }) => ({
        status: 200,
        body: await downloadModule(deps, { lookup, downloads, access: await callerAccess(caller) }, params.id, query),
      }),
    }),
    defineRoute({
      method: "post",
      path: "/modules/updates",
      signedAnswers: true,
      operationId: "checkModuleUpdates",
      summary: "For the installed modules: which have a newer compatible version, and which installed versions are yanked or revoked.",
      tag: "Marketplace",
      auth: "user",
      body: updatesBodySchema,
      // A question, not a change.
      idempotencyKey: false,
      responses: { 200: { description: "One item per module to update; others are left out.", schema: moduleUpdatesSchema } },
      handle: async ({ body, caller }) => ({ status: 200, body: await checkModuleUpdates(deps, await callerAccess(caller), body) }),
    }),
  ];
};
