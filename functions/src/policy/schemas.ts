import semver from "semver";
import { z } from "zod";
import { POLICY_MODES } from "../access/install-policy";
import { PUBLISHER_ID, semverVersion } from "../core/documents";
import { isoDateTime, oneLine } from "../core/schemas";
import { moduleIdSchema } from "../marketplace/schemas";

/** §26's limits. */
export const MAX_POLICY_RULES = 500;
export const MAX_REQUIRED_MODULES = 100;
export const MAX_MINIMUM_VERSIONS = 500;

const publisherId = z.string().max(32).regex(PUBLISHER_ID, "Not a publisher id (3-32 of [a-z0-9-], starting with a letter).");
const versionRange = z
  .string()
  .min(1)
  .max(200)
  .refine((range) => semver.validRange(range) !== null, "must be a semver range such as '>=2.1.0 <3' or '^1.4'");
const reason = oneLine(z.string().trim().min(1).max(500));

const ruleSchema = z
  .strictObject({
    effect: z.enum(["allow", "block"]),
    publisher: publisherId.optional(),
    module: moduleIdSchema.optional(),
    versions: versionRange.optional(),
    reason: reason.optional(),
  })
  .refine((rule) => rule.publisher !== undefined || rule.module !== undefined, "A rule names a publisher, a module or both.")
  .refine((rule) => rule.publisher === undefined || rule.module === undefined || rule.module.startsWith(`${rule.publisher}.`), "A rule's module must be one of its publisher's.")
  .meta({ id: "PolicyRule" });

export const policyBodySchema = z
  .strictObject({
    mode: z.enum(POLICY_MODES).meta({ description: "open: what no rule matches is allowed; allowlist: only what a rule allows (and the business's own modules)." }),
    rules: z.array(ruleSchema).max(MAX_POLICY_RULES),
    minimumVersions: z
      .record(moduleIdSchema, semverVersion)
      .refine((versions) => Object.keys(versions).length <= MAX_MINIMUM_VERSIONS, `at most ${MAX_MINIMUM_VERSIONS} modules`)
      .default({}),
    required: z
      .array(moduleIdSchema)
      .max(MAX_REQUIRED_MODULES)
      .refine((ids) => new Set(ids).size === ids.length, "lists a module twice")
      .default([]),
    message: z.string().trim().min(1).max(500).nullable().default(null),
  })
  .meta({ id: "PolicyChange" });

export const policySchema = z
  .object({
    businessId: z.string(),
    mode: z.enum(POLICY_MODES),
    rules: z.array(ruleSchema),
    minimumVersions: z.record(z.string(), z.string()),
    required: z.array(z.string()),
    message: z.string().nullable(),
    version: z.number().int().meta({ description: "Grows by one per change; 0: the business has never set a policy (everything is allowed)." }),
    updatedAt: isoDateTime.nullable(),
  })
  .meta({ id: "Policy" });

export const evaluateBodySchema = z.strictObject({ moduleId: moduleIdSchema, version: semverVersion.optional() });

export const evaluationSchema = z
  .object({
    allowed: z.boolean(),
    version: z.string().nullable().meta({ description: "The version decided on: the one asked about, else the newest allowed (null: none is)." }),
    rule: ruleSchema.nullable().meta({ description: "The deciding rule; null when no rule matched (the mode decided) or a minimum version did." }),
    reason: z.string().optional(),
  })
  .meta({ id: "PolicyEvaluation" });

export const signedPolicySchema = z
  .object({ jws: z.string().meta({ description: "Compact JWS (typ policy+jwt, the module signing key of GET /signing-keys) over the policy with businessId, version and iat." }) })
  .meta({ id: "SignedPolicy" });
