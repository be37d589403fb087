import { z } from "zod";
import { isoDateTime, isStorableId } from "../core/schemas";
import { appVersion, moduleIdSchema, versionSchema } from "../marketplace/schemas";
import { DEVICE_ID } from "./rules";

// A device id is a key of the activation's `devices` map: Firestore's reserved names are refused here.
const deviceIdSchema = z
  .string()
  .max(128)
  .regex(DEVICE_ID, "must be 1-128 of [A-Za-z0-9._:-]")
  .refine(isStorableId, "must not be '.', '..' or a name of the form __name__")
  .meta({
    description: "The device's own stable id (1-128 of [A-Za-z0-9._:-], not '.', '..' or __name__), e.g. a hash of its machine id.",
  });

export const confirmBodySchema = z.strictObject({
  moduleId: moduleIdSchema,
  version: versionSchema.optional().meta({ description: "Defaults to the latest published version (with appVersion, the highest compatible one)." }),
  appVersion: appVersion.optional(),
  deviceId: deviceIdSchema.optional().meta({ description: "Records the activation on this device (within the device limit) and issues a certificate." }),
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
