import { z } from "zod";
import { emailAddress, isoDateTime, oneLine } from "../core/schemas";
import { PUBLISHER_ID } from "../core/documents";

const publisherId = z
  .string()
  .regex(PUBLISHER_ID, "publisherId must be 3-32 of [a-z0-9-], starting with a letter.")
  .meta({ description: "3-32 of [a-z0-9-], starting with a letter; unique." });
const displayName = oneLine(z.string().trim().min(1).max(100));

export const registerWithPasswordSchema = z.strictObject({
  email: emailAddress(),
  password: z.string().min(8, "password must have at least 8 characters.").max(256),
  displayName,
  publisherId,
});

export const registerWithTokenSchema = z.strictObject({ displayName, publisherId });

export const registerBodySchema = z
  .union([registerWithPasswordSchema, registerWithTokenSchema])
  .meta({ description: "With email and password: a new account. With a Bearer token: { displayName, publisherId } only." });

export const loginBodySchema = z.strictObject({ email: z.string().min(1).max(254), password: z.string().min(1).max(256) });

export const developerSchema = z
  .object({
    id: z.string(),
    email: z.string().nullable(),
    displayName: z.string(),
    publisherId: z.string(),
    createdAt: isoDateTime,
  })
  .meta({ id: "Developer" });

export const sessionSchema = z
  .object({
    developer: developerSchema,
    idToken: z.string(),
    refreshToken: z.string(),
    expiresIn: z.number().int().meta({ description: "Seconds until the ID token expires." }),
  })
  .meta({ id: "DeveloperSession" });

export const registeredSchema = z.union([
  sessionSchema,
  z.object({ developer: developerSchema }),
  z
    .object({ developer: developerSchema, idToken: z.null(), refreshToken: z.null(), expiresIn: z.number().int() })
    .meta({ description: "A replay under the same Idempotency-Key: the session's tokens are shown once, so they come back as null (sign in instead)." }),
]);

export const refreshBodySchema = z.strictObject({ refreshToken: z.string().min(1).max(4096) });

export const refreshedSchema = z
  .object({
    idToken: z.string(),
    refreshToken: z.string(),
    expiresIn: z.number().int().meta({ description: "Seconds until the ID token expires." }),
  })
  .meta({ id: "RefreshedSession" });

export const createAccessTokenSchema = z.strictObject({
  name: oneLine(z.string().trim().min(1).max(100)).meta({ description: "What the token is for, e.g. 'GitHub Actions'." }),
  expiresInDays: z.number().int().min(1).max(365).default(90),
});

export const accessTokenSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    createdAt: isoDateTime,
    expiresAt: isoDateTime,
    lastUsedAt: isoDateTime.nullable().meta({ description: "Within a minute." }),
  })
  .meta({ id: "AccessToken" });

export const createdAccessTokenSchema = accessTokenSchema
  .omit({ lastUsedAt: true })
  .extend({ token: z.string().nullable().meta({ description: "mpt_…: shown this once (null in a replay under the same Idempotency-Key); only its SHA-256 is stored." }) })
  .meta({ id: "CreatedAccessToken" });

export const accessTokenListSchema = z.object({ items: z.array(accessTokenSchema) }).meta({ id: "AccessTokenList" });

export const accessTokenParamsSchema = z.strictObject({ id: z.string().max(68).regex(/^tok_[0-9A-Za-z]{1,64}$/, "Not an access token id (tok_…).") });
