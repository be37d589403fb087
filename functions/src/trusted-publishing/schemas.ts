import { z } from "zod";
import { isoDateTime } from "../core/schemas";
import { moduleIdSchema } from "../marketplace/schemas";

const claimValue = z.string().min(1).max(512);

const pinnedClaims = z
  .strictObject({
    repository: claimValue.optional().meta({ description: "e.g. acme/charts (GitHub's `repository` claim)." }),
    repository_owner: claimValue.optional(),
    workflow_ref: claimValue.optional().meta({ description: "e.g. acme/charts/.github/workflows/release.yml@refs/heads/main" }),
    ref: claimValue.optional().meta({ description: "e.g. refs/heads/main or refs/tags/v1.2.3" }),
    environment: claimValue.optional(),
  })
  .meta({ description: "Claims the CI token must carry, each exactly." });

export const moduleParamsSchema = z.strictObject({ id: moduleIdSchema });
export const trustedPublisherParamsSchema = z.strictObject({
  id: moduleIdSchema,
  tpId: z.string().max(19).regex(/^tp_[0-9A-Za-z]{16}$/, "Not a trusted publisher id (tp_…)."),
});

export const addTrustedPublisherSchema = z
  .strictObject({
    issuer: z.string().min(1).max(512).meta({ description: "One of TRUSTED_ISSUERS, exactly as the tokens' `iss`." }),
    subject: claimValue.optional().meta({ description: "The token's `sub`, exactly (e.g. repo:acme/charts:environment:release)." }),
    claims: pinnedClaims.optional(),
  })
  .refine((input) => input.subject !== undefined || input.claims?.repository !== undefined, {
    message: "Name at least the subject or claims.repository.",
    path: ["subject"],
  });

export const trustedPublisherSchema = z
  .object({
    id: z.string(),
    issuer: z.string(),
    subject: z.string().nullable(),
    claims: z.object({
      repository: z.string().optional(),
      repository_owner: z.string().optional(),
      workflow_ref: z.string().optional(),
      ref: z.string().optional(),
      environment: z.string().optional(),
    }),
    createdAt: isoDateTime,
  })
  .meta({ id: "TrustedPublisher" });

export const trustedPublisherListSchema = z.object({ items: z.array(trustedPublisherSchema) }).meta({ id: "TrustedPublisherList" });

export const oidcExchangeSchema = z.strictObject({
  token: z.string().min(1).max(16_384).meta({ description: "The CI's OIDC ID token (a JWT whose aud is OIDC_AUDIENCE)." }),
});

export const publishTokenSchema = z
  .object({
    token: z.string().meta({ description: "mpo_…: a Bearer token for /developers/modules* of these modules only; shown once." }),
    expiresAt: isoDateTime,
    moduleIds: z.array(z.string()),
  })
  .meta({ id: "PublishToken" });
