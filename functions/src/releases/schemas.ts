import { z } from "zod";
import { semverVersion } from "../core/documents";
import { documentId, isoDateTime, oneLine } from "../core/schemas";
import { FEED_FILES } from "./feeds";
import { ARCHES, CHANNELS, HEALTH_EVENTS, PLATFORMS } from "./rules";

export const releaseListQuerySchema = z.strictObject({
  platform: z.enum(PLATFORMS).optional(),
  channel: z.enum(CHANNELS).optional(),
});

/** The architecture an installer redirect serves when the caller names none. */
export const DEFAULT_ARCH = { win32: "x64", darwin: "arm64", linux: "x64" } as const;

export const installerPlatformParamsSchema = z.strictObject({ platform: z.enum(PLATFORMS) });

export const installerRedirectQuerySchema = z.strictObject({
  channel: z.enum(CHANNELS).default("stable"),
  arch: z.enum(ARCHES).optional().meta({ description: "Default: x64 for win32 and linux, arm64 for darwin." }),
});

export const releaseIdParamsSchema = z.strictObject({
  releaseId: documentId.refine((id) => id !== "download", "Not a release id."),
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
    sha512: z.string().nullable().meta({ description: "Base64 SHA-512 of the installer, as update feeds carry it." }),
    notes: z.string().nullable(),
    publishedAt: isoDateTime,
    rolloutPercentage: z.number().int().meta({ description: "Share of callers offered the release (staged rollout), 0-100." }),
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
  rollout: z.coerce.number({ error: "must be a whole number from 0 to 100" }).int("must be a whole number from 0 to 100").min(0).max(100).default(100),
});

export const rolloutInput = z.object({
  releaseId: documentId,
  percentage: z.coerce.number({ error: "must be a whole number from 0 to 100" }).int("must be a whole number from 0 to 100").min(0).max(100),
});

export const yankInput = z.object({ releaseId: documentId, reason: z.string().trim().min(1).max(500).optional() });

export const releaseIdInput = z.object({ releaseId: documentId });

export const electronFeedParamsSchema = z.strictObject({
  platform: z.enum(PLATFORMS),
  arch: z.enum(ARCHES),
  file: z.enum(FEED_FILES).meta({ description: "latest.yml, latest-mac.yml, latest-linux.yml, or the beta ones; the suffix must be the platform's." }),
});

export const electronFileParamsSchema = z.strictObject({
  platform: z.enum(PLATFORMS),
  arch: z.enum(ARCHES),
  version: semverVersion,
  file: z.string().min(1).max(255).meta({ description: "The installer's file name, or that name + .blockmap." }),
});

const stagingId = oneLine(z.string().min(1).max(128))
  .meta({ description: "The caller's staging id (electron-updater sends X-User-Staging-Id); the header wins." });

export const updateQuerySchema = z.strictObject({ stagingId: stagingId.optional() });

export const updateCheckParamsSchema = z.strictObject({
  platform: z.enum(PLATFORMS),
  arch: z.enum(ARCHES),
  channel: z.enum(CHANNELS),
  currentVersion: semverVersion,
});

export const electronFeedSchema = z.string().meta({ description: "electron-updater channel file (YAML): version, files, path, sha512, releaseDate, releaseNotes, stagingPercentage." });

export const updateSchema = z
  .object({
    version: z.string(),
    name: z.string(),
    notes: z.string(),
    pub_date: isoDateTime,
    url: z.string().meta({ description: "The release's stable download address (GET /releases/{releaseId}/download)." }),
    sha256: z.string(),
    sha512: z.string().nullable(),
    size: z.number().int(),
  })
  .meta({ id: "Update" });

export const healthReportSchema = z.strictObject({
  releaseId: documentId,
  stagingId: oneLine(z.string().min(1).max(128)),
  fromVersion: semverVersion.meta({ description: "The version the app updated from." }),
  event: z.enum(HEALTH_EVENTS),
  error: z.string().max(500).optional().meta({ description: "What went wrong, for failed and crashed." }),
});

export const healthReportAcceptedSchema = z.object({ accepted: z.literal(true) }).meta({ id: "HealthReportAccepted" });

const rate = z.coerce.number().min(0).max(1);

/** Operators' `release ramp`: the steps and their pace, and the bounds that halt it. */
export const rampInput = z.object({
  releaseId: documentId,
  steps: z
    .string()
    .transform((value, ctx) => {
      const steps = value.split(",").map((step) => Number(step.trim()));
      if (steps.some((step) => !Number.isInteger(step) || step < 1 || step > 100) || steps.some((step, i) => i > 0 && step <= steps[i - 1])) {
        ctx.addIssue({ code: "custom", message: "must be rising whole percentages of 1-100, e.g. 1,5,25,50,100" });
        return z.NEVER;
      }
      return steps;
    }),
  every: z.coerce.number({ error: "must be a number of hours, e.g. 24 or 0.5" }).positive("must be a number of hours, e.g. 24 or 0.5").max(24 * 90),
  maxFailureRate: rate.default(0.02),
  maxCrashRate: rate.default(0.01),
  minReports: z.coerce.number().int().min(1).default(50),
});
