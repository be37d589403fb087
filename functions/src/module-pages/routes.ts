import { installPoliciesOf, loadCallerData, viewerOf } from "../accounts/caller-data";
import { NO_STORE } from "../core/http-cache";
import { defineRoute } from "../core/routes";
import type { Deps } from "../deps";
import { moduleIconQuerySchema, moduleIconSchema, moduleImageParamsSchema, moduleImageSchema, modulePageParamsSchema, modulePageSchema } from "./schemas";
import { modulePages } from "./service";

/** A publisher's file served as it is: nothing in it may run, and its type is not guessed. */
const PACKAGE_MEDIA_HEADERS = { "Content-Security-Policy": "default-src 'none'", "X-Content-Type-Options": "nosniff" };
/** A private module's files (§26) are for the members who asked: no cache may keep them for anyone else. */
const PRIVATE_MEDIA_HEADERS = { ...PACKAGE_MEDIA_HEADERS, "Cache-Control": NO_STORE };

export const modulePageRoutes = (deps: Deps) => {
  const pages = modulePages(deps);
  return [
    defineRoute({
      method: "get",
      path: "/modules/:id",
      operationId: "getModule",
      summary: "A listed module's page: details, published versions, and its latest version's README and CHANGELOG as sanitized HTML.",
      tag: "Marketplace",
      auth: "optional",
      params: modulePageParamsSchema,
      responses: { 200: { description: "The module.", schema: modulePageSchema } },
      problems: ["module_not_found"],
      cache: "public-anonymous",
      handle: async ({ params, caller }) => {
        const data = caller ? await loadCallerData(deps.db, caller, deps.clock()) : null;
        return { status: 200, body: await pages.page(params.id, data, data ? await installPoliciesOf(deps.db, data.access) : []) };
      },
    }),
    defineRoute({
      method: "get",
      path: "/modules/:id/icon",
      operationId: "getModuleIcon",
      summary: "The PNG icon of a listed module's latest version (or of the version `v`); a private module's (§26) with a member's token.",
      tag: "Marketplace",
      auth: "optional",
      params: modulePageParamsSchema,
      query: moduleIconQuerySchema,
      responses: { 200: { description: "The icon.", schema: moduleIconSchema, mediaType: "image/png" } },
      problems: ["module_not_found", "version_not_found"],
      cache: "public",
      handle: async ({ params, query, caller }) => {
        const icon = await pages.icon(params.id, query.v, viewerOf(deps.db, caller, deps.clock()));
        return { status: 200, media: { data: icon.png, type: "image/png" }, headers: icon.private ? PRIVATE_MEDIA_HEADERS : PACKAGE_MEDIA_HEADERS };
      },
    }),
    defineRoute({
      method: "get",
      path: "/modules/:id/images/:index",
      operationId: "getModuleImage",
      summary: "An image the README of a listed module's latest version (or of the version `v`) shows, as readmeHtml addresses it; a private module's (§26) with a member's token.",
      tag: "Marketplace",
      auth: "optional",
      params: moduleImageParamsSchema,
      query: moduleIconQuerySchema,
      responses: { 200: { description: "The image.", schema: moduleImageSchema, mediaType: "image/*" } },
      problems: ["module_not_found", "version_not_found"],
      cache: "public",
      handle: async ({ params, query, caller }) => {
        const image = await pages.image(params.id, params.index, query.v, viewerOf(deps.db, caller, deps.clock()));
        return { status: 200, media: { data: image.bytes, type: image.type }, headers: image.private ? PRIVATE_MEDIA_HEADERS : PACKAGE_MEDIA_HEADERS };
      },
    }),
  ];
};
