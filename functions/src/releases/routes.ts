import { memo } from "../core/memo";
import { defineRoute } from "../core/routes";
import type { Deps } from "../deps";
import {
  DEFAULT_ARCH,
  installerPlatformParamsSchema,
  installerRedirectQuerySchema,
  releaseIdParamsSchema,
  releaseListQuerySchema,
  releaseListSchema,
  type Release,
} from "./schemas";
import { latestInstallerUrl, listReleases, releaseCatalog, releaseInstallerUrl } from "./service";

export const releaseRoutes = ({ db, store, config }: Deps) => {
  const catalog = releaseCatalog(db, config.memoryCacheMs);
  const lists = memo<{ items: Release[] }>({ ttlMs: config.memoryCacheMs, maxEntries: 64 });
  return [
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
      handle: async ({ query }) => ({
        status: 200,
        body: await lists.get(JSON.stringify(query), async () => ({ items: await listReleases(catalog, query) })),
      }),
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
        const { url } = await releaseInstallerUrl(db, store, params.releaseId, config.signedUrlTtlSeconds);
        return { status: 302, headers: { Location: url, "Cache-Control": "no-store" } };
      },
    }),
  ];
};
