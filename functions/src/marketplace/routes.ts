import type { z } from "zod";
import { installPoliciesOf, loadCallerData, loadInstallAccess, type AccessSubject } from "../accounts/caller-data";
import { catalogCache, MODULES_TOPIC } from "../core/catalog-changes";
import { noBusiness } from "../businesses/membership";
import { ApiError } from "../core/errors";
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
import { checkModuleUpdates, downloadModule, downloadReads, listModules, withAccess, withPolicy } from "./service";
import { privateCatalogs } from "./private-catalog";

export const moduleRoutes = (deps: Deps) => {
  const callerData = (caller: AccessSubject) => loadCallerData(deps.db, caller, deps.clock());
  const installAccess = (caller: AccessSubject) => loadInstallAccess(deps.db, caller, deps.clock());
  const { lookup, downloads } = downloadReads(deps);
  // A page of the listing is the same for everyone (only access flags differ): a warm instance
  // serves pages from memory, current with the catalog's change feed, and adds the caller's flags.
  const pages = catalogCache<Awaited<ReturnType<typeof listModules>>>(deps.db, { ttlMs: deps.config.memoryCacheMs, maxEntries: 256 });
  // Built on first use: declaring the routes touches no backend.
  let catalog: SearchCatalog | undefined;
  const search = () => (catalog ??= marketplaceSearch(deps));
  const ownModules = privateCatalogs(deps);
  /**
   * `?business=`: a member's view (§26): the business's private modules beside the public ones
   * (the page is the same for every member, and kept like the public ones), then the caller's
   * access and their install policies' decision on each item.
   */
  const businessPage = async (businessId: string, query: z.output<typeof moduleListQuerySchema>, caller: AccessSubject | null) => {
    const data = caller ? await callerData(caller) : null;
    const membership = data?.access.memberships.find((candidate) => candidate.businessId === businessId);
    if (!data || !membership) throw noBusiness(businessId);
    if (membership.ssoRequired) throw new ApiError("sso_required", `Business '${businessId}' requires signing in through its single sign-on; sign in that way and retry.`);
    const page = await pages.get(JSON.stringify(query), MODULES_TOPIC, async () => listModules(deps, search(), query, await ownModules(businessId)));
    return withPolicy(withAccess(page, data), await installPoliciesOf(deps.db, data.access));
  };
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
      problems: ["business_not_found", "sso_required"],
      handle: async ({ query, caller }) => {
        if (query.business !== undefined) return { status: 200, body: await businessPage(query.business, query, caller) };
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
      problems: ["not_entitled", "module_not_found", "version_not_found", "no_compatible_version", "module_revoked", "blocked_by_policy", "fallback_only"],
      handle: async ({ params, query, caller }) => ({
        status: 200,
        body: await downloadModule(deps, { lookup, downloads, access: await installAccess(caller) }, params.id, query),
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
      handle: async ({ body, caller }) => ({ status: 200, body: await checkModuleUpdates(deps, await installAccess(caller), body, caller.uid) }),
    }),
  ];
};
