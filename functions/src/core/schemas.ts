import { z } from "zod";
import { documentIdProblem } from "./documents";
import { packageFindingSchema } from "./findings";

/** Building blocks shared by the resources' schemas. */

export const isoDateTime = z.iso.datetime().meta({ description: "RFC 3339 timestamp, UTC." });

/**
 * Whether Firestore stores a string as a document id or a map key (the rules of
 * `documentIdProblem`, which `documentAt` applies to every id). Every client-given string that
 * becomes either passes this, so none reaches Firestore to be refused there as a 5xx.
 */
export const isStorableId = (id: string): boolean => documentIdProblem(id) === null;

/**
 * One line of text (§1, "Text fields"): no line break or tab. Every request string is already
 * refused any other control character (validation.ts); multi-line fields, such as a review's body,
 * keep newlines and tabs.
 */
export const oneLine = <T extends z.ZodString>(text: T) => text.refine((value) => !/[\n\t]/.test(value), "must be one line: no line breaks or tabs");

/** An email address within RFC 5321's lengths: a local part of at most 64 characters, 254 in all. */
export const emailAddress = (message = "must be an email address") =>
  z
    .string()
    .trim()
    .max(254, "at most 254 characters")
    .pipe(z.email(message))
    .refine((value) => value.lastIndexOf("@") <= 64, "the part before @ may have at most 64 characters");

/**
 * A DNS domain name a company or publisher owns, lowercased: at least two labels of letters,
 * digits and inner hyphens, each at most 63 characters, 253 in all (punycode for other scripts).
 */
export const domainName = z
  .string()
  .trim()
  .toLowerCase()
  .max(253, "at most 253 characters")
  .regex(/^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$/, "must be a domain name such as example.com");

/** A Firestore document id as it may appear in a path. */
export const documentId = z.string().min(1).max(200).refine(isStorableId, "Not a valid id.");

export const problemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    code: z.string().meta({ description: "Stable, snake_case error code for programs." }),
    detail: z.string().optional(),
    requestId: z.string(),
    errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
    findings: z.array(packageFindingSchema).optional().meta({ description: "package_rejected: what the package checks found." }),
  })
  .meta({ id: "Problem", description: "RFC 9457 problem details." });

/** A public Ed25519 key as a JWK (RFC 8037), as the service's and publishers' key lists give them. */
export const ed25519PublicJwkSchema = z.object({
  kty: z.literal("OKP"),
  crv: z.literal("Ed25519"),
  x: z.string(),
  kid: z.string(),
  alg: z.literal("EdDSA"),
  use: z.literal("sig"),
});

/** A device's own id (§10): 1-128 of [A-Za-z0-9._:-]. */
export const DEVICE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

// A device id is a key of the activation's `devices` map: Firestore's reserved names are refused here.
export const deviceIdSchema = z
  .string()
  .max(128)
  .regex(DEVICE_ID, "must be 1-128 of [A-Za-z0-9._:-]")
  .refine(isStorableId, "must not be '.', '..' or a name of the form __name__")
  .meta({
    description: "The device's own stable id (1-128 of [A-Za-z0-9._:-], not '.', '..' or __name__), e.g. a hash of its machine id.",
  });

