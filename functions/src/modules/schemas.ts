import { z } from "zod";
import { pageQuery } from "../core/pagination";
import { isoDateTime } from "../core/schemas";
import { moduleIdSchema, versionSchema } from "../developers/schemas";

export const moduleListQuerySchema = z.strictObject({
  ...pageQuery,
  category: z.string().min(1).max(40).optional(),
  q: z.string().min(1).max(100).optional().meta({
    description: "One word: matches a whole word or a word prefix of the id, name or summary, case-insensitively.",
  }),
});

export const marketplaceModuleSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    summary: z.string(),
    category: z.string().nullable(),
    publisherId: z.string(),
    latestVersion: z.string(),
    entitlement: z.string().nullable().meta({ description: "Needed to use the module; null when it is free." }),
    updatedAt: isoDateTime,
    access: z
      .object({ usable: z.boolean(), activated: z.boolean() })
      .optional()
      .meta({ description: "Present when the request carries an ID token." }),
  })
  .meta({ id: "MarketplaceModule" });

export const moduleListSchema = z
  .object({ items: z.array(marketplaceModuleSchema), nextCursor: z.string().nullable() })
  .meta({ id: "MarketplaceModuleList" });

export const confirmBodySchema = z.strictObject({
  moduleId: moduleIdSchema,
  version: versionSchema.optional().meta({ description: "Defaults to the latest published version." }),
  deviceId: z.string().min(1).max(200).optional(),
});

export const activationSchema = z
  .object({ moduleId: z.string(), version: z.string(), activatedAt: isoDateTime, updatedAt: isoDateTime })
  .meta({ id: "Activation" });

export const downloadParamsSchema = z.strictObject({ id: moduleIdSchema });
export const downloadQuerySchema = z.strictObject({ version: versionSchema.optional() });

export const downloadSchema = z
  .object({
    moduleId: z.string(),
    version: z.string(),
    url: z.string().meta({ description: "V4 signed Cloud Storage URL, valid at most 15 minutes." }),
    expiresAt: isoDateTime,
    sha256: z.string(),
    size: z.number().int(),
    signature: z.string(),
    keyId: z.string(),
  })
  .meta({ id: "ModuleDownload" });
