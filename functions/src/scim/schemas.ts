import { z } from "zod";
import { documentId, emailAddress, isoDateTime } from "../core/schemas";
import { ANY_CONTROL } from "../core/validation";

/**
 * SCIM 2.0 bodies (RFC 7643, 7644) as identity providers send them: unknown attributes and
 * extensions are accepted and ignored, booleans may come as strings ("False", as Microsoft Entra
 * ID sends them), text is one line without control characters.
 */

export const SCIM_USER = "urn:ietf:params:scim:schemas:core:2.0:User";
export const SCIM_GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
export const SCIM_LIST = "urn:ietf:params:scim:api:messages:2.0:ListResponse";
export const SCIM_PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
export const SCIM_SEARCH = "urn:ietf:params:scim:api:messages:2.0:SearchRequest";
export const SCIM_ERROR = "urn:ietf:params:scim:api:messages:2.0:Error";

const text = (max: number) => z.string().max(max).refine((value) => !ANY_CONTROL.test(value), "must be one line without control characters");

/** A boolean, or its name in any case ("True", "false"). */
export const scimBoolean = z.preprocess((value) => (typeof value === "string" && /^(true|false)$/i.test(value) ? value.toLowerCase() === "true" : value), z.boolean());

const email = emailAddress("must be an email address").transform((value) => value.toLowerCase());

const nameSchema = z.looseObject({
  formatted: text(500).nullish(),
  familyName: text(200).nullish(),
  givenName: text(200).nullish(),
  middleName: text(200).nullish(),
  honorificPrefix: text(50).nullish(),
  honorificSuffix: text(50).nullish(),
});

const emailEntry = z.looseObject({ value: email, type: text(50).nullish(), primary: scimBoolean.nullish() });

export const scimUserInput = z.looseObject({
  userName: email.meta({ description: "The member's sign-in email." }),
  externalId: text(500).nullish(),
  displayName: text(200).nullish(),
  name: nameSchema.nullish(),
  emails: z.array(emailEntry).max(20).nullish(),
  active: scimBoolean.nullish(),
});
export type ScimUserInput = z.output<typeof scimUserInput>;

const memberReference = z.looseObject({ value: text(200).pipe(documentId), display: z.unknown().optional() });
/** The members a PATCH operation names: a list of references, or one (§22). */
export const memberReferences = z.union([z.array(memberReference).max(5_000), memberReference.transform((reference) => [reference])]);

export const scimGroupInput = z.looseObject({
  displayName: text(256).trim().min(1, "must not be empty"),
  externalId: text(500).nullish(),
  members: z.array(memberReference).max(5_000).nullish(),
});
export type ScimGroupInput = z.output<typeof scimGroupInput>;

export const scimPatchInput = z.looseObject({
  Operations: z
    .array(z.looseObject({ op: z.string().max(20), path: text(500).optional(), value: z.unknown().optional() }))
    .min(1)
    .max(1_000),
});

/** The query of a list (GET) or the body of `/.search` (POST), as far as this server reads them. */
export const scimListQuery = z.looseObject({
  filter: z.string().max(4_000).optional(),
  startIndex: z.coerce.number().int().optional(),
  count: z.coerce.number().int().optional(),
  attributes: z.union([z.string().max(2_000), z.array(z.string().max(200)).max(100)]).optional(),
  excludedAttributes: z.union([z.string().max(2_000), z.array(z.string().max(200)).max(100)]).optional(),
});

export const projectionQuery = scimListQuery.pick({ attributes: true, excludedAttributes: true });

// The management API of SCIM (not SCIM itself): tokens and settings, for owners.

export const newScimTokenSchema = z.strictObject({ name: text(100).trim().min(1, "must not be empty") });
export const scimTokenParamsSchema = z.strictObject({ businessId: documentId, tokenId: documentId });

export const scimTokenSchema = z
  .object({ id: z.string(), name: z.string(), createdAt: isoDateTime, lastUsedAt: isoDateTime.nullable() })
  .meta({ id: "ScimToken" });
export const createdScimTokenSchema = scimTokenSchema
  .omit({ lastUsedAt: true })
  .extend({
    token: z.string().meta({ description: "scim_ and 43 base62 characters: shown this once, stored only as a hash." }),
    baseUrl: z.string().meta({ description: "The SCIM base URL to give the identity provider: {base_url}/scim/v2." }),
  })
  .meta({ id: "CreatedScimToken" });
export const scimTokenListSchema = z.object({ items: z.array(scimTokenSchema), baseUrl: z.string() }).meta({ id: "ScimTokenList" });

const groupNames = z.array(text(256).trim().min(1)).max(50);
export const scimSettingsSchema = z
  .strictObject({
    roleGroups: z
      .strictObject({ admin: groupNames.optional().meta({ description: "Members of these SCIM groups (by displayName, any case) are admins." }) })
      .optional(),
    seatGroups: groupNames.nullable().optional().meta({ description: "When set, only members of these SCIM groups hold seats; null or absent: seats are given as members join." }),
  })
  .meta({ id: "ScimSettings" });
export const storedScimSettingsSchema = z
  .object({ roleGroups: z.object({ admin: z.array(z.string()).optional() }), seatGroups: z.array(z.string()).nullable() })
  .meta({ id: "StoredScimSettings" });
