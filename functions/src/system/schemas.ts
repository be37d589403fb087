import { z } from "zod";

export const healthSchema = z.object({ status: z.literal("ok") }).meta({ id: "Health" });

export const jwksSchema = z
  .object({
    keys: z.array(
      z.object({
        kty: z.literal("OKP"),
        crv: z.literal("Ed25519"),
        x: z.string(),
        kid: z.string(),
        alg: z.literal("EdDSA"),
        use: z.literal("sig"),
      }),
    ),
  })
  .meta({ id: "SigningKeys", description: "JWKS of every key whose module signatures may still be in use." });

export const openApiDocumentSchema = z.record(z.string(), z.unknown()).meta({ description: "OpenAPI 3.1 document." });
