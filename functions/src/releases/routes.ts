import { memo } from "../core/memo";
import { defineRoute } from "../core/routes";
import type { Deps } from "../deps";
import { installerRedirectQuerySchema, releaseListQuerySchema, releaseListSchema, type Release } from "./schemas";
import { latestInstallerUrl, listReleases, releaseCatalog } from "./service";

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
      path: "/releases/download/win32",
      operationId: "downloadLatestWindowsInstaller",
      summary: "Redirects to a short-lived signed URL of the latest Windows installer of a channel.",
      tag: "Releases",
      auth: "none",
      query: installerRedirectQuerySchema,
      responses: {
        302: {
          description: "Redirect to the installer.",
          headers: { Location: "Signed Cloud Storage URL, valid at most 15 minutes." },
        },
      },
      problems: ["release_not_found"],
      handle: async ({ query }) => {
        const { url } = await latestInstallerUrl(
          catalog,
          store,
          { platform: "win32", channel: query.channel, arch: query.arch },
          config.signedUrlTtlSeconds,
        );
        return { status: 302, headers: { Location: url, "Cache-Control": "no-store" } };
      },
    }),
  ];
};
