import { z } from "zod";
import { packageFindingSchema } from "../core/findings";
import { provenanceSchema } from "../core/provenance";
import { isoDateTime, oneLine } from "../core/schemas";
import { REVIEW_STATES, VERSION_STATES } from "../marketplace/module-store";
import { moduleIdSchema, modulePriceSchema, versionSchema } from "../marketplace/schemas";

export const yankBodySchema = z.strictObject({ moduleId: moduleIdSchema, version: versionSchema, reason: oneLine(z.string().trim().min(1).max(500)).optional() });
export const unyankBodySchema = z.strictObject({ moduleId: moduleIdSchema, version: versionSchema });

export const yankedSchema = z
  .object({ moduleId: z.string(), version: z.string(), yankedAt: isoDateTime.nullable() })
  .meta({ id: "YankedVersion" });

export const publishBodySchema = z.strictObject({ moduleId: moduleIdSchema, version: versionSchema });

export const reviewSchema = z
  .object({
    state: z.enum(REVIEW_STATES).meta({ description: "passed, or quarantined until an operator approves (then publishable) or rejects it." }),
    findings: z.array(packageFindingSchema),
    reason: z.string().optional().meta({ description: "Why an operator rejected the version." }),
    note: z.string().optional().meta({ description: "An operator's note on approval." }),
  })
  .meta({ id: "Review" });

export const revocationSchema = z
  .object({ reason: z.string(), revokedAt: isoDateTime })
  .meta({ id: "Revocation", description: "An operator revoked the version (or the whole module): it is never downloaded or confirmed." });

export const signedVersionSchema = z
  .object({
    moduleId: z.string(),
    version: z.string(),
    sha256: z.string(),
    size: z.number().int(),
    signature: z.string().meta({ description: "Compact JWS (EdDSA) over { moduleId, version, sha256, size, publisherId, iat }." }),
    keyId: z.string(),
    signedAt: isoDateTime,
    state: z.literal("signed"),
    review: reviewSchema.extend({ state: z.enum(["passed", "quarantined"]) }),
    provenance: provenanceSchema.nullable(),
    authorKeyId: z.string().nullable().meta({ description: "The author key of the X-Author-Signature, when one was sent." }),
  })
  .meta({ id: "SignedVersion" });

export const policyParamsSchema = z.strictObject({ id: moduleIdSchema });
export const policyBodySchema = z.strictObject({
  requireTrustedPublishing: z.boolean().meta({ description: "Sign, publish, yank and unyank only with an OIDC publish token (mpo_…)." }),
  requireAuthorSignature: z.boolean().meta({ description: "Sign only with a valid X-Author-Signature." }),
});
export const policySchema = z
  .object({ moduleId: z.string(), requireTrustedPublishing: z.boolean(), requireAuthorSignature: z.boolean() })
  .meta({ id: "PublishPolicy" });

export const moduleSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    summary: z.string(),
    description: z.string().nullable(),
    category: z.string().nullable(),
    publisherId: z.string(),
    entitlement: z.string().nullable(),
    price: modulePriceSchema.nullable().meta({ description: "Its price while it is for sale (§20); null when free." }),
    latestVersion: z.string().nullable(),
    downloads: z.number().int(),
    createdAt: isoDateTime,
    updatedAt: isoDateTime,
  })
  .meta({ id: "Module" });

export const versionViewSchema = z
  .object({
    version: z.string(),
    state: z.enum(VERSION_STATES),
    sha256: z.string(),
    size: z.number().int(),
    signedAt: isoDateTime,
    publishedAt: isoDateTime.nullable(),
    minAppVersion: z.string().nullable(),
  })
  .meta({ id: "ModuleVersion" });

export const publishedSchema = z.object({ module: moduleSchema, version: versionViewSchema }).meta({ id: "Published" });

export const developerModulesSchema = z
  .object({
    items: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        latestVersion: z.string().nullable(),
        downloads: z.number().int(),
        policy: z.object({ requireTrustedPublishing: z.boolean(), requireAuthorSignature: z.boolean() }),
        price: modulePriceSchema.nullable().meta({ description: "Its price while it is for sale (§20); null when free." }),
        versions: z.array(
          versionViewSchema.omit({ minAppVersion: true }).extend({
            yankedAt: isoDateTime.nullable(),
            yankReason: z.string().nullable().meta({ description: "Why it was yanked, as its owner said (§24); null when not yanked or no reason was given." }),
            review: reviewSchema,
            revocation: revocationSchema.nullable(),
            provenance: provenanceSchema.nullable(),
            authorKeyId: z.string().nullable(),
          }),
        ),
      }),
    ),
  })
  .meta({ id: "DeveloperModules" });

const day = z.iso.date().meta({ description: "A UTC day, YYYY-MM-DD." });

export const statsParamsSchema = z.strictObject({ id: moduleIdSchema });
export const statsQuerySchema = z.strictObject({
  from: day.optional().meta({ description: "First day (default: 29 days before to)." }),
  to: day.optional().meta({ description: "Last day, inclusive (default: today, UTC). At most 366 days from from." }),
});

export const downloadStatsSchema = z
  .object({
    moduleId: z.string(),
    from: z.string(),
    to: z.string(),
    total: z.number().int().meta({ description: "Downloads over the whole range." }),
    days: z.array(
      z.object({
        date: z.string(),
        downloads: z.number().int(),
        versions: z.record(z.string(), z.number().int()).meta({ description: "Downloads of each version that day." }),
      }),
    ),
  })
  .meta({ id: "DownloadStats" });
