import { z } from "zod";

export const signedRevocationListSchema = z
  .object({
    list: z.string().meta({
      description:
        "Compact JWS (EdDSA, typ revocations+jwt, kid in GET /signing-keys) over { serial, iat, exp, entries: [ { moduleId, version ('*' for all), sha256 (null for '*'), reason, revokedAt } ] }.",
    }),
  })
  .meta({ id: "RevocationList" });
