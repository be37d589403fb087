import { loadInstallAccess } from "../accounts/caller-data";
import { moduleNotFound } from "../access/visibility";
import { ApiError } from "../core/errors";
import { defineRoute } from "../core/routes";
import type { Deps } from "../deps";
import { downloadModule, downloadReads } from "../marketplace/service";
import { metadataReader } from "./serving";
import { parseMetadataFileName, parseTargetFileName } from "./rules";
import { metadataParamsSchema, targetParamsSchema, tufMetadataSchema } from "./schemas";

const JSON_MEDIA = "application/json; charset=utf-8";

/** The TUF repository (contract §23): its metadata, public, and its targets, downloaded as `GET /modules/download/:id` is. */
export const tufRoutes = (deps: Deps) => {
  // Built on first use: declaring the routes touches no backend.
  let reader: ReturnType<typeof metadataReader> | undefined;
  const metadata = () => (reader ??= metadataReader(deps, deps.config.memoryCacheMs));
  const reads = downloadReads(deps);
  const notFound = (file: string) => new ApiError("not_found", `No TUF metadata file '${file}'.`);
  return [
    defineRoute({
      method: "get",
      path: "/tuf/metadata/:file",
      operationId: "getTufMetadata",
      summary: "A TUF metadata file: timestamp.json (not cached), or a versioned file of consistent snapshots (immutable).",
      description: "`<N>.root.json` answers for every root version and 404 past the newest, which is how a client walks a rotation.",
      tag: "TUF repository",
      auth: "none",
      params: metadataParamsSchema,
      responses: { 200: { description: "The file, exactly as signed.", schema: tufMetadataSchema } },
      cache: "immutable",
      problems: ["not_found"],
      handle: async ({ params }) => {
        const wanted = parseMetadataFileName(params.file);
        if (!wanted) throw notFound(params.file);
        if (wanted.kind === "timestamp") {
          const json = await metadata().timestamp();
          if (json === null) throw notFound(params.file);
          return { status: 200, media: { data: json, type: JSON_MEDIA }, headers: { "Cache-Control": "no-cache" } };
        }
        const json = await metadata().versioned(wanted.role, wanted.version);
        if (json === null) throw notFound(params.file);
        return { status: 200, media: { data: json, type: JSON_MEDIA } };
      },
    }),
    defineRoute({
      method: "get",
      path: "/tuf/targets/modules/:moduleId/:file",
      operationId: "downloadTufTarget",
      summary: "A module package as a TUF target (`<sha256>.<version>.mpkg`): a redirect to its signed URL, under the download rules.",
      tag: "TUF repository",
      auth: "user",
      params: targetParamsSchema,
      responses: { 302: { description: "To the package's signed URL (≤ 15 minutes); not cacheable.", headers: { Location: "The signed URL." } } },
      problems: ["not_entitled", "module_not_found", "version_not_found", "module_revoked", "blocked_by_policy", "fallback_only"],
      handle: async ({ params, caller }) => {
        const target = parseTargetFileName(params.file);
        if (!target) throw new ApiError("version_not_found", `'${params.file}' is not a target of ${params.moduleId} (<sha256>.<version>.mpkg).`);
        // A business's private module (§26) has no targets here, for anyone: its members download it directly.
        if ((await reads.lookup.module(params.moduleId))?.businessId) throw moduleNotFound(params.moduleId);
        const access = await loadInstallAccess(deps.db, caller, deps.clock());
        const download = await downloadModule(deps, { ...reads, access }, params.moduleId, { version: target.version, sha256: target.sha256 });
        return { status: 302, headers: { Location: download.url, "Cache-Control": "no-store" } };
      },
    }),
  ];
};
