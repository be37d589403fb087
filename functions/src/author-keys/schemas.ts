import { z } from "zod";
import { PUBLISHER_ID } from "../core/documents";
import { ed25519PublicJwkSchema, isoDateTime, oneLine } from "../core/schemas";

export const publicKeyInputSchema = z
  .strictObject({
    kty: z.literal("OKP"),
    crv: z.literal("Ed25519"),
    x: z.string().regex(/^[A-Za-z0-9_-]{43}$/, "x must be the 32-byte public key, base64url without padding."),
    alg: z.literal("EdDSA").optional(),
    use: z.literal("sig").optional(),
  })
  .meta({ id: "Ed25519PublicJwk", description: "The public half only: a key with 'd' (private) is refused." });

export const addAuthorKeySchema = z.strictObject({
  name: oneLine(z.string().trim().min(1).max(100)).meta({ description: "What it is, e.g. 'release laptop' or 'CI signing key'." }),
  publicKey: publicKeyInputSchema,
});

export const kidParamsSchema = z.strictObject({ kid: z.string().max(43).regex(/^[A-Za-z0-9_-]{43}$/, "Not a key id (an RFC 7638 thumbprint).") });
export const publisherParamsSchema = z.strictObject({ publisherId: z.string().max(32).regex(PUBLISHER_ID, "Not a publisher id (3-32 of [a-z0-9-], starting with a letter).") });

export const authorKeySchema = z
  .object({
    kid: z.string().meta({ description: "The key's RFC 7638 thumbprint: the kid of the author signatures it makes." }),
    name: z.string(),
    createdAt: isoDateTime,
    revokedAt: isoDateTime.nullable(),
  })
  .meta({ id: "AuthorKey" });

export const authorKeyListSchema = z.object({ items: z.array(authorKeySchema) }).meta({ id: "AuthorKeyList" });

export const publisherKeysSchema = z
  .object({
    keys: z.array(
      ed25519PublicJwkSchema.extend({
        createdAt: isoDateTime,
        revokedAt: isoDateTime.optional().meta({ description: "Present once revoked: refused for new uploads; earlier signatures stand." }),
      }),
    ),
  })
  .meta({ id: "PublisherKeys" });
