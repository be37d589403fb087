import { z } from "zod";
import { semverVersion, VERSION_STATES } from "../core/documents";
import { isoDateTime } from "../core/schemas";
import { MODULE_ID, PUBLISHER_ID } from "./package";

const publisherId = z
  .string()
  .regex(PUBLISHER_ID, "publisherId must be 3-32 of [a-z0-9-], starting with a letter.")
  .meta({ description: "3-32 of [a-z0-9-], starting with a letter; unique." });
const displayName = z.string().trim().min(1).max(100);

export const registerWithPasswordSchema = z.strictObject({
  email: z.email().max(254),
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

export const registeredSchema = z.union([sessionSchema, z.object({ developer: developerSchema })]);

export const moduleIdSchema = z.string().regex(MODULE_ID, "Not a module id ('<publisherId>.<name>').");
export const versionSchema = semverVersion.meta({ description: "A semver version, e.g. 1.2.3." });

export const publishBodySchema = z.strictObject({ moduleId: moduleIdSchema, version: versionSchema });

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
  })
  .meta({ id: "SignedVersion" });

export const moduleSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    summary: z.string(),
    description: z.string().nullable(),
    category: z.string().nullable(),
    publisherId: z.string(),
    entitlement: z.string().nullable(),
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
        versions: z.array(versionViewSchema.omit({ minAppVersion: true })),
      }),
    ),
  })
  .meta({ id: "DeveloperModules" });
