import { z } from "zod";
import { ARCHES, CHANNELS, PLATFORMS } from "../core/documents";
import { isoDateTime } from "../core/schemas";

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
