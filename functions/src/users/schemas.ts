import { z } from "zod";
import { POLICY_MODES } from "../access/install-policy";
import { BUSINESS_ROLES, PURCHASE_STATUSES } from "../access/rules";
import { deviceSchema } from "../activations/schemas";
import { isoDateTime } from "../core/schemas";

export const entitlementGrantSchema = z.object({
  key: z.string().meta({ description: "An entitlement key, or module:<moduleId> for a purchased module (§20)." }),
  source: z.enum(["direct", "subscription", "purchase", "fallback"]).meta({ description: "fallback: a subscription that ended keeps its fallback versions (§27)." }),
  businessId: z.string().optional().meta({ description: "The business whose subscription or purchase grants it." }),
  purchaseId: z.string().optional().meta({ description: "The purchase that grants it (source purchase or fallback)." }),
  maxVersion: z.string().nullable().optional().meta({ description: "Source fallback: the newest version it keeps (the purchase's fallbackVersion)." }),
});

export const purchaseSummarySchema = z
  .object({
    id: z.string(),
    moduleId: z.string(),
    model: z.enum(["one_time", "subscription"]),
    status: z.enum(PURCHASE_STATUSES),
    currentPeriodEnd: isoDateTime.nullable().meta({ description: "A subscription's period end; null for a one-time purchase." }),
    businessId: z.string().optional().meta({ description: "The business that bought it, when a business did." }),
    fallbackUntil: isoDateTime.optional().meta({ description: "Once a subscription with a perpetual fallback ended and its fallback is what grants the module (§27): the versions of this date stay the buyer's." }),
    fallbackVersion: z.string().nullable().optional().meta({ description: "The newest of those versions that may be served (with their bug fixes); with fallbackUntil." }),
    fallbackIfEnded: z
      .object({ fallbackUntil: isoDateTime, fallbackVersion: z.string().nullable() })
      .optional()
      .meta({ description: "While something else still grants the module (the subscription is live): the fallback its paid invoices earned so far, which would stay the buyer's if it ended (§27)." }),
  })
  .meta({ id: "PurchaseSummary" });

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
        ssoRequired: z.boolean().meta({ description: "The business enforces single sign-on and this request did not come through its provider: none of its entitlements are here (§22)." }),
      }),
    ),
    purchases: z.array(purchaseSummarySchema).meta({ description: "The user's module purchases, and those of their businesses that reach them (§20)." }),
    policies: z
      .array(
        z.object({
          businessId: z.string(),
          version: z.number().int(),
          mode: z.enum(POLICY_MODES),
          required: z.array(z.string()).meta({ description: "Modules the business requires its members to have installed." }),
          message: z.string().nullable(),
        }),
      )
      .meta({ description: "The install policies of the user's businesses, however this request signed in (§26): every one must allow what the user installs; GET /businesses/:id/policy/signed gives each whole and signed." }),
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
