import { z } from "zod";

export const SSO_PROVIDER_ID = /^(saml|oidc)\.[a-z0-9-]+$/;

export const ssoSettingsSchema = z
  .strictObject({
    providerId: z
      .string()
      .max(100)
      .regex(SSO_PROVIDER_ID, "must be a SAML or OIDC provider id of Firebase Authentication, such as saml.okta or oidc.entra")
      .nullable()
      .meta({ description: "The SAML or OIDC provider configured in Firebase Authentication (Identity Platform); null: none." }),
    enforce: z.boolean().meta({ description: "Members (owners excepted) reach the business and its entitlements only when signed in through the provider." }),
    jit: z.boolean().meta({ description: "People of the business's verified domains who sign in through the provider become members at their first GET /users/me." }),
  })
  .refine((settings) => settings.providerId !== null || (!settings.enforce && !settings.jit), { message: "enforce and jit need a providerId", path: ["providerId"] })
  .meta({ id: "SsoSettings" });
