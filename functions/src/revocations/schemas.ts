import { z } from "zod";

export const signedRevocationListSchema = z
  .object({
    list: z.string().meta({
      description:
        "Compact JWS (EdDSA, typ revocations+jwt, kid in GET /signing-keys) over { serial, iat, exp, businessId (a business's list only), entries: [ { moduleId, version ('*' for all), sha256 (null for '*'), reason, revokedAt } ] }.",
    }),
  })
  .meta({ id: "RevocationList" });
