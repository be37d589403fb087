import { z } from "zod";
import { semverVersion } from "../core/documents";
import { documentId, isoDateTime } from "../core/schemas";

export const PLATFORMS = ["win32", "darwin", "linux"] as const;
export const ARCHES = ["x64", "arm64"] as const;
export const CHANNELS = ["stable", "beta"] as const;

export const releaseListQuerySchema = z.strictObject({
  platform: z.enum(PLATFORMS).optional(),
  channel: z.enum(CHANNELS).optional(),
});

export const installerRedirectQuerySchema = z.strictObject({
  channel: z.enum(CHANNELS).default("stable"),
  arch: z.enum(ARCHES).default("x64"),
});

export const releaseSchema = z
  .object({
    id: z.string(),
    version: z.string().meta({ description: "Semver." }),
    platform: z.enum(PLATFORMS),
    arch: z.enum(ARCHES),
    channel: z.enum(CHANNELS),
    fileName: z.string(),
    size: z.number().int(),
    sha256: z.string(),
    notes: z.string().nullable(),
    publishedAt: isoDateTime,
  })
  .meta({ id: "Release" });

export const releaseListSchema = z.object({ items: z.array(releaseSchema) }).meta({ id: "ReleaseList" });

export type Release = z.output<typeof releaseSchema>;

/** Operators' `release publish`: the release's fields (the bytes come as a stream beside them). */
export const publishReleaseInput = z.object({
  version: semverVersion,
  platform: z.enum(PLATFORMS),
  arch: z.enum(ARCHES),
  channel: z.enum(CHANNELS).default("stable"),
  notes: z.string().max(10_000).optional(),
  replace: z.boolean().default(false),
  fileName: z.string().min(1).max(255),
});

export const releaseIdInput = z.object({ releaseId: documentId });
