import type { Request } from "express";
import { ApiError, invalidRequest } from "../core/errors";
import { NO_STORE } from "../core/http-cache";
import { defineRoute } from "../core/routes";
import type { Deps } from "../deps";
import { electronFeed, feedChannel, jsonUpdate } from "./feeds";
import { latestInstallerUrl, listReleases, offeredUpdate, releaseCatalog, releaseFileUrl, releaseInstallerUrl, reportHealth } from "./service";
import {
  DEFAULT_ARCH,
  electronFeedParamsSchema,
  electronFeedSchema,
  electronFileParamsSchema,
  healthReportAcceptedSchema,
  healthReportSchema,
  installerPlatformParamsSchema,
  installerRedirectQuerySchema,
  releaseIdParamsSchema,
  releaseListQuerySchema,
  releaseListSchema,
  updateCheckParamsSchema,
  updateQuerySchema,
  updateSchema,
  type Release,
} from "./schemas";

/** X-User-Staging-Id (what electron-updater sends) wins over ?stagingId; too long is a 400. */
function stagingIdOf(req: Request, fromQuery: string | undefined): string | undefined {
  const header = req.get("x-user-staging-id");
  if (header !== undefined && (header.length === 0 || header.length > 128)) {
    throw invalidRequest("X-User-Staging-Id must be 1-128 characters.", [{ path: "X-User-Staging-Id", message: "1-128 characters." }]);
  }
  return header ?? fromQuery;
}

/** An answer for one staging id is the caller's own; without one it may be shared. */
const varyByStaging = (stagingId: string | undefined): Record<string, string> =>
  stagingId === undefined ? { Vary: "X-User-Staging-Id" } : { Vary: "X-User-Staging-Id", "Cache-Control": NO_STORE };

export const releaseRoutes = (deps: Deps) => {
  const { db, store, config } = deps;
  /** The release's stable download address, absolute, from PUBLIC_BASE_URL (never the request's Host). */
  const downloadUrl = (releaseId: string) => `${config.publicBaseUrl}/releases/${encodeURIComponent(releaseId)}/download`;
  /**
   * A release's installer as electron-updater's feed names it (§19): the version is a path segment,
   * so the updater's old-blockmap address (the new one with the installed version written in) resolves.
   */
  const feedFileUrl = (release: Release | { platform: string; arch: string; version: string; fileName: string }) =>
    `${config.publicBaseUrl}/updates/electron/${release.platform}/${release.arch}/files/${encodeURIComponent(release.version)}/${encodeURIComponent(release.fileName)}`;
  const catalog = releaseCatalog(db, config.memoryCacheMs);
  // Lists of one catalog snapshot, by query: the same object for the same answer, so its JSON and
  // ETag are computed once per snapshot (core/http-cache.ts).
  const lists = new WeakMap<object, Map<string, { items: Release[] }>>();
  const listOf = async (query: Parameters<typeof listReleases>[1]) => {
    const snapshot = await catalog.all();
    const byQuery = lists.get(snapshot) ?? new Map<string, { items: Release[] }>();
    lists.set(snapshot, byQuery);
    const key = JSON.stringify(query);
    const list = byQuery.get(key) ?? { items: await listReleases({ all: async () => snapshot }, query) };
    byQuery.set(key, list);
    return list;
  };
  return [
    defineRoute({
      method: "post",
      path: "/updates/reports",
      operationId: "reportUpdateHealth",
      summary: "How an update went on one installed app: downloaded, installed, failed, launched or crashed.",
      description:
        "No token needed; limited per client address (REPORTS_PER_IP_PER_MINUTE). Each (releaseId, stagingId, event) counts once: a repeat is accepted and changes nothing.",
      tag: "Releases",
      auth: "none",
      body: healthReportSchema,
      // Counted once per (release, staging id, event) by its nature: a repeat is already safe.
      idempotencyKey: false,
      responses: { 202: { description: "Recorded (or already recorded).", schema: healthReportAcceptedSchema } },
      problems: ["release_not_found"],
      handle: async ({ body }) => {
        await reportHealth(deps, catalog, body);
        return { status: 202, body: { accepted: true } };
      },
    }),
    defineRoute({
      method: "get",
      path: "/releases",
      operationId: "listReleases",
      summary: "Every published release of the desktop installer, highest semver first.",
      tag: "Releases",
      auth: "none",
      query: releaseListQuerySchema,
      responses: { 200: { description: "The releases.", schema: releaseListSchema } },
      cache: "public",
      handle: async ({ query }) => ({ status: 200, body: await listOf(query) }),
    }),
    defineRoute({
      method: "get",
      path: "/releases/download/:platform",
      operationId: "downloadLatestInstaller",
      summary: "Redirects to a short-lived signed URL of the latest installer of a platform, arch and channel.",
      description: "The highest-semver release that is not yanked and whose rollout is above 0.",
      tag: "Releases",
      auth: "none",
      params: installerPlatformParamsSchema,
      query: installerRedirectQuerySchema,
      responses: {
        302: {
          description: "Redirect to the installer.",
          headers: { Location: "Signed Cloud Storage URL, valid at most 15 minutes." },
        },
      },
      problems: ["release_not_found"],
      handle: async ({ params, query }) => {
        const { url } = await latestInstallerUrl(
          catalog,
          store,
          { platform: params.platform, channel: query.channel, arch: query.arch ?? DEFAULT_ARCH[params.platform] },
          config.signedUrlTtlSeconds,
        );
        return { status: 302, headers: { Location: url, "Cache-Control": "no-store" } };
      },
    }),
    defineRoute({
      method: "get",
      path: "/releases/:releaseId/download",
      operationId: "downloadRelease",
      summary: "Redirects to a fresh signed URL of one release's installer: the stable address update feeds use.",
      tag: "Releases",
      auth: "none",
      params: releaseIdParamsSchema,
      responses: {
        302: {
          description: "Redirect to the installer.",
          headers: { Location: "Signed Cloud Storage URL, valid at most 15 minutes." },
        },
      },
      problems: ["release_not_found", "release_yanked"],
      handle: async ({ params }) => {
        const { url } = await releaseInstallerUrl(deps, params.releaseId);
        return { status: 302, headers: { Location: url, "Cache-Control": "no-store" } };
      },
    }),
    defineRoute({
      method: "get",
      path: "/updates/electron/:platform/:arch/files/:version/:file",
      operationId: "electronUpdateFile",
      summary: "Redirects to a fresh signed URL of a release's installer, or of its blockmap (the installer's name + .blockmap): the files of the electron-updater feed.",
      description: "Signed Cloud Storage URLs honour one HTTP Range per request (set useMultipleRangeRequest: false), which differential downloads use.",
      tag: "Updates",
      auth: "none",
      params: electronFileParamsSchema,
      responses: {
        302: { description: "Redirect to the file.", headers: { Location: "Signed Cloud Storage URL, valid at most 15 minutes." } },
      },
      problems: ["release_not_found", "release_yanked"],
      handle: async ({ params }) => {
        const { url } = await releaseFileUrl(deps, catalog, { platform: params.platform, arch: params.arch, version: params.version, name: params.file });
        return { status: 302, headers: { Location: url, "Cache-Control": "no-store" } };
      },
    }),
    defineRoute({
      method: "get",
      path: "/updates/electron/:platform/:arch/:file",
      operationId: "electronUpdateFeed",
      summary: "electron-updater's generic-provider channel file for a platform and arch (configure the app with .../updates/electron/{platform}/{arch}).",
      description: "The release offered to the caller by the staged-rollout rule, read afresh: a halt or yank takes effect on the next request.",
      tag: "Updates",
      auth: "none",
      params: electronFeedParamsSchema,
      query: updateQuerySchema,
      responses: { 200: { description: "The channel file.", schema: electronFeedSchema, mediaType: "text/yaml" } },
      problems: ["not_found", "release_not_found"],
      cache: "public",
      handle: async ({ params, query, req }) => {
        const channel = feedChannel(params.file, params.platform);
        if (!channel) throw new ApiError("not_found", `${params.file} is not a channel file of ${params.platform}.`);
        const stagingId = stagingIdOf(req, query.stagingId);
        const offered = await offeredUpdate(db, { platform: params.platform, arch: params.arch, channel }, stagingId);
        return {
          status: 200,
          media: { data: electronFeed(offered, feedFileUrl(offered), stagingId === undefined), type: "text/yaml; charset=utf-8" },
          headers: varyByStaging(stagingId),
        };
      },
    }),
    defineRoute({
      method: "get",
      path: "/updates/:platform/:arch/:channel/:currentVersion",
      operationId: "checkForUpdate",
      summary: "JSON update check (Squirrel.Mac, Hazel-style clients): 204 when the caller is current.",
      tag: "Updates",
      auth: "none",
      params: updateCheckParamsSchema,
      query: updateQuerySchema,
      responses: {
        200: { description: "A newer release is offered.", schema: updateSchema },
        204: { description: "The offered release is not newer than currentVersion." },
      },
      problems: ["release_not_found"],
      cache: "public",
      handle: async ({ params, query, req }) => {
        const stagingId = stagingIdOf(req, query.stagingId);
        const offered = await offeredUpdate(db, params, stagingId);
        const update = jsonUpdate(offered, params.currentVersion, downloadUrl(offered.id));
        return update ? { status: 200, body: update, headers: varyByStaging(stagingId) } : { status: 204, headers: { "Cache-Control": "no-store" } };
      },
    }),
  ];
};
