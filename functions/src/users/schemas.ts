import { z } from "zod";
import { BUSINESS_ROLES } from "../access/rules";
import { deviceSchema } from "../activations/schemas";
import { isoDateTime } from "../core/schemas";

export const entitlementGrantSchema = z.object({
  key: z.string(),
  source: z.enum(["direct", "subscription"]),
  businessId: z.string().optional().meta({ description: "The business whose subscription grants it." }),
});

export const userProfileSchema = z
  .object({
    uid: z.string(),
    email: z.string().nullable(),
    displayName: z.string().nullable(),
    entitlements: z.array(entitlementGrantSchema),
    businesses: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        role: z.enum(BUSINESS_ROLES),
        seat: z.boolean().meta({ description: "Whether the user holds a seat of this business (§17)." }),
        entitled: z.boolean().meta({ description: "Whether the business's subscription grants this user its entitlements now." }),
      }),
    ),
    activations: z.array(
      z.object({
        moduleId: z.string(),
        version: z.string(),
        activatedAt: isoDateTime,
        devices: z.array(deviceSchema).meta({ description: "The devices holding the module, oldest first (§10)." }),
      }),
    ),
  })
  .meta({ id: "UserProfile" });

export type UserProfile = z.output<typeof userProfileSchema>;
