import { z } from "zod";
import { deviceIdSchema, isoDateTime } from "../core/schemas";
import { appVersion, moduleIdSchema, platformSchema, versionSchema } from "../marketplace/schemas";

export const confirmBodySchema = z.strictObject({
  moduleId: moduleIdSchema,
  version: versionSchema.optional().meta({ description: "Defaults to the latest published version (with appVersion, the highest compatible one)." }),
  appVersion: appVersion.optional(),
  deviceId: deviceIdSchema.optional().meta({ description: "Records the activation on this device (within the device limit) and issues a certificate." }),
  platform: platformSchema.optional(),
});

export const activationSchema = z
  .object({
    moduleId: z.string(),
    version: z.string(),
    activatedAt: isoDateTime,
    updatedAt: isoDateTime,
    certificate: z.string().optional().meta({
      description:
        "With a deviceId: a compact JWS (alg EdDSA, typ activation+jwt, kid in GET /signing-keys) of { sub, moduleId, version, deviceId, entitlement, iat, exp, jti }, for offline checks.",
    }),
  })
  .meta({ id: "Activation" });

export const deviceParamsSchema = z.strictObject({ moduleId: moduleIdSchema, deviceId: deviceIdSchema });

export const deviceSchema = z.object({ deviceId: z.string(), activatedAt: isoDateTime, lastSeenAt: isoDateTime }).meta({ id: "ActivatedDevice" });
