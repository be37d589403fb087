import { z } from "zod";
import { ed25519PublicJwkSchema } from "../core/schemas";

export const healthSchema = z.object({ status: z.literal("ok") }).meta({ id: "Health" });

export const jwksSchema = z
  .object({
    keys: z.array(ed25519PublicJwkSchema),
  })
  .meta({ id: "SigningKeys", description: "JWKS of every key whose module signatures may still be in use." });

export const openApiDocumentSchema = z.record(z.string(), z.unknown()).meta({ description: "OpenAPI 3.1 document." });
