import { MAX_RESULTS } from "./resources";
import { SCIM_GROUP, SCIM_USER } from "./schemas";

/**
 * SCIM's discovery resources (RFC 7644 §4, RFC 7643 §5–§7): what this server supports, its
 * resource types, and the schemas of the attributes it keeps.
 */

const SP_CONFIG = "urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig";
const RESOURCE_TYPE = "urn:ietf:params:scim:schemas:core:2.0:ResourceType";
const SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Schema";

interface Attribute {
  name: string;
  type: "string" | "boolean" | "complex" | "dateTime" | "reference";
  multiValued?: boolean;
  required?: boolean;
  caseExact?: boolean;
  mutability?: "readOnly" | "readWrite" | "immutable";
  uniqueness?: "none" | "server";
  returned?: "always" | "default";
  subAttributes?: Attribute[];
  referenceTypes?: string[];
}

const attribute = (spec: Attribute): Record<string, unknown> => ({
  name: spec.name,
  type: spec.type,
  multiValued: spec.multiValued ?? false,
  description: "",
  required: spec.required ?? false,
  caseExact: spec.caseExact ?? false,
  mutability: spec.mutability ?? "readWrite",
  returned: spec.returned ?? "default",
  uniqueness: spec.uniqueness ?? "none",
  ...(spec.referenceTypes ? { referenceTypes: spec.referenceTypes } : {}),
  ...(spec.subAttributes ? { subAttributes: spec.subAttributes.map(attribute) } : {}),
});

const text = (name: string, extra: Partial<Attribute> = {}): Attribute => ({ name, type: "string", ...extra });

const SCHEMAS = [
  {
    id: SCIM_USER,
    name: "User",
    description: "A member of the business; userName is their sign-in email.",
    attributes: [
      text("userName", { required: true, uniqueness: "server", mutability: "immutable" }),
      text("externalId", { caseExact: true, uniqueness: "server" }),
      text("displayName"),
      { name: "name", type: "complex", subAttributes: ["formatted", "familyName", "givenName", "middleName", "honorificPrefix", "honorificSuffix"].map((name) => text(name)) } as Attribute,
      { name: "emails", type: "complex", multiValued: true, subAttributes: [text("value"), text("type"), { name: "primary", type: "boolean" }] } as Attribute,
      { name: "active", type: "boolean" } as Attribute,
      {
        name: "groups",
        type: "complex",
        multiValued: true,
        mutability: "readOnly",
        subAttributes: [text("value", { mutability: "readOnly" }), { name: "$ref", type: "reference", referenceTypes: ["Group"], mutability: "readOnly" }, text("display", { mutability: "readOnly" })],
      } as Attribute,
    ].map(attribute),
  },
  {
    id: SCIM_GROUP,
    name: "Group",
    description: "A named set of the business's SCIM Users; the settings map groups to admins and seat holders.",
    attributes: [
      text("displayName", { required: true, uniqueness: "server" }),
      text("externalId", { caseExact: true, uniqueness: "server" }),
      {
        name: "members",
        type: "complex",
        multiValued: true,
        subAttributes: [text("value", { mutability: "immutable", caseExact: true }), { name: "$ref", type: "reference", referenceTypes: ["User"], mutability: "immutable" }, text("display", { mutability: "readOnly" })],
      } as Attribute,
    ].map(attribute),
  },
];

export function serviceProviderConfig(baseUrl: string) {
  return {
    schemas: [SP_CONFIG],
    documentationUri: `${baseUrl.replace(/\/api\/v1\/scim\/v2$/, "")}/docs/guides/it-administrators`,
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: MAX_RESULTS },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: true },
    authenticationSchemes: [{ type: "oauthbearertoken", name: "SCIM token", description: "Authorization: Bearer scim_…, made by an owner of the business (POST /businesses/:id/scim/tokens).", primary: true }],
    meta: { resourceType: "ServiceProviderConfig", location: `${baseUrl}/ServiceProviderConfig` },
  };
}

export function resourceTypes(baseUrl: string) {
  return [
    { schemas: [RESOURCE_TYPE], id: "User", name: "User", endpoint: "/Users", description: "Members of the business", schema: SCIM_USER, meta: { resourceType: "ResourceType", location: `${baseUrl}/ResourceTypes/User` } },
    { schemas: [RESOURCE_TYPE], id: "Group", name: "Group", endpoint: "/Groups", description: "Groups of members", schema: SCIM_GROUP, meta: { resourceType: "ResourceType", location: `${baseUrl}/ResourceTypes/Group` } },
  ];
}

export function schemas(baseUrl: string) {
  return SCHEMAS.map((schema) => ({ schemas: [SCHEMA], ...schema, meta: { resourceType: "Schema", location: `${baseUrl}/Schemas/${schema.id}` } }));
}
