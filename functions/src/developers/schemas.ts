import { z } from "zod";
import { isoDateTime } from "../core/schemas";
import { PUBLISHER_ID } from "../modules/package";

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
