import { createHash } from "node:crypto";
import { filter as compiledFilter, parse, type Filter } from "scim2-parse-filter";
import type { BusinessRecord, MemberRecord, ScimGroupRecord } from "../accounts/business-records";
import { toIso } from "../core/documents";
import { pathNamesPrototype } from "../core/validation";
import { SCIM_GROUP, SCIM_LIST, SCIM_USER } from "./schemas";

/**
 * SCIM resources as this server answers them (RFC 7643): Users are the members SCIM created or
 * linked, Groups the business's SCIM groups; `meta.version` is a weak ETag of the representation,
 * so it changes exactly when an answer would.
 */

export type ScimResource = Record<string, unknown> & { id: string; meta: Record<string, unknown> };

/** A SCIM error with its status and, where RFC 7644 names one, its scimType. */
export class ScimError extends Error {
  constructor(
    readonly status: number,
    readonly scimType: string | null,
    message: string,
  ) {
    super(message);
  }
}

export const invalidValue = (detail: string) => new ScimError(400, "invalidValue", detail);
export const uniqueness = (detail: string) => new ScimError(409, "uniqueness", detail);
export const mutability = (detail: string) => new ScimError(400, "mutability", detail);
export const notFound = (kind: "User" | "Group", id: string) => new ScimError(404, null, `No ${kind} '${id}'.`);

function withVersion(resource: ScimResource): ScimResource {
  const version = `W/"${createHash("sha256").update(JSON.stringify(resource)).digest("base64url").slice(0, 22)}"`;
  return { ...resource, meta: { ...resource.meta, version } };
}

/** A member SCIM created or linked: only these are SCIM Users. */
export type ScimMember = MemberRecord & { scim: NonNullable<MemberRecord["scim"]> };
export const isScimMember = (member: MemberRecord | null): member is ScimMember => member !== null && member.scim !== null;

export function userResource(member: ScimMember, business: Pick<BusinessRecord, "scimGroups">, baseUrl: string): ScimResource {
  const { scim } = member;
  const groups = business.scimGroups
    .filter((group) => member.groups.includes(group.id))
    .map((group) => ({ value: group.id, display: group.displayName, $ref: `${baseUrl}/Groups/${group.id}` }));
  return withVersion({
    schemas: [SCIM_USER],
    id: member.uid,
    ...(scim.externalId !== null ? { externalId: scim.externalId } : {}),
    userName: scim.userName,
    ...(Object.keys(scim.name).length > 0 ? { name: scim.name } : {}),
    ...(scim.displayName !== null ? { displayName: scim.displayName } : {}),
    emails: scim.emails.length > 0 ? scim.emails : [{ value: scim.userName, type: "work", primary: true }],
    active: !member.suspended,
    groups,
    meta: { resourceType: "User", created: toIso(scim.created), lastModified: toIso(scim.lastModified), location: `${baseUrl}/Users/${member.uid}` },
  });
}

/**
 * A group, with its members (the members whose documents name it, in uid order) when they are
 * asked for: null leaves them out. Its version follows the group's revision (each change of its
 * name, ids or members), not the member list, so that checking `If-Match` reads no member (§25).
 */
export function groupResource(group: ScimGroupRecord, state: { revision: number; lastModified: Date | null }, members: readonly MemberRecord[] | null, baseUrl: string): ScimResource {
  const lastModified = state.lastModified && state.lastModified > group.lastModified ? state.lastModified : group.lastModified;
  const version = `W/"${createHash("sha256").update(JSON.stringify([group.id, group.displayName, group.externalId, group.created.getTime(), state.revision])).digest("base64url").slice(0, 22)}"`;
  const sorted = members && [...members].sort((a, b) => (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0));
  return {
    schemas: [SCIM_GROUP],
    id: group.id,
    ...(group.externalId !== null ? { externalId: group.externalId } : {}),
    displayName: group.displayName,
    ...(sorted ? { members: sorted.map((member) => ({ value: member.uid, ...(member.scim ? { display: member.scim.userName } : {}), $ref: `${baseUrl}/Users/${member.uid}` })) } : {}),
    meta: { resourceType: "Group", created: toIso(group.created), lastModified: toIso(lastModified), location: `${baseUrl}/Groups/${group.id}`, version },
  };
}


// Filters (RFC 7644 §3.4.2.2): parsed by scim2-parse-filter; attribute names match in any case,
// and the attributes RFC 7643 makes case-insensitive (userName, emails, names) compare so.

const ATTRIBUTES = ["id", "externalId", "userName", "displayName", "name", "givenName", "familyName", "formatted", "middleName", "emails", "value", "type", "primary", "display", "active", "groups", "members", "meta", "created", "lastModified", "resourceType", "location", "version"];
const CANONICAL = new Map(ATTRIBUTES.map((name) => [name.toLowerCase(), name]));
const CASE_INSENSITIVE = new Set(["userName", "displayName", "emails.value", "emails.type", "name.givenName", "name.familyName", "name.formatted", "name.middleName", "groups.display", "members.display"]);
const CORE_PREFIX = /^urn:ietf:params:scim:schemas:core:2\.0:(user|group):/i;

/** An attribute path as this server names it; one that names a prototype key is 400 invalidPath before it nears an object. */
const canonicalPath = (path: string) => {
  if (pathNamesPrototype(path)) throw new ScimError(400, "invalidPath", `'${path}' is not an attribute: __proto__, constructor and prototype are never accepted.`);
  return path
    .replace(CORE_PREFIX, "")
    .split(".")
    .map((segment) => CANONICAL.get(segment.toLowerCase()) ?? segment)
    .join(".");
};

const comparedValue = (path: string, value: unknown) => {
  if (typeof value !== "string") return value;
  if (CASE_INSENSITIVE.has(path)) return value.toLowerCase();
  if (path === "meta.lastModified" || path === "meta.created") {
    const at = Date.parse(value);
    return Number.isNaN(at) ? value : new Date(at).toISOString();
  }
  return value;
};

function canonicalFilter(node: Filter, parent = ""): Filter {
  switch (node.op) {
    case "and":
    case "or":
      return { ...node, filters: node.filters.map((child) => canonicalFilter(child, parent)) };
    case "not":
      return { ...node, filter: canonicalFilter(node.filter, parent) };
    case "[]": {
      const attrPath = canonicalPath(node.attrPath);
      return { ...node, attrPath, valFilter: canonicalFilter(node.valFilter, `${parent}${attrPath}.`) };
    }
    case "pr": {
      return { ...node, attrPath: canonicalPath(node.attrPath) };
    }
    default: {
      const attrPath = canonicalPath(node.attrPath);
      return { ...node, attrPath, compValue: comparedValue(`${parent}${attrPath}`, node.compValue) } as Filter;
    }
  }
}

/** The resource as filters compare it: case-insensitive attributes lowercased. */
function comparable(resource: ScimResource): Record<string, unknown> {
  const copy = structuredClone(resource) as Record<string, unknown>;
  const lower = (value: unknown) => (typeof value === "string" ? value.toLowerCase() : value);
  for (const path of CASE_INSENSITIVE) {
    const [head, tail] = path.split(".");
    const value = copy[head];
    if (tail === undefined) copy[head] = lower(value);
    else if (Array.isArray(value)) for (const item of value as Record<string, unknown>[]) item[tail] = lower(item[tail]);
    else if (value && typeof value === "object") (value as Record<string, unknown>)[tail] = lower((value as Record<string, unknown>)[tail]);
  }
  return copy;
}

/** A filter an index answers: one attribute equal to one value (what Okta and Entra send, and a group's members paged, §25). */
export interface IndexedEquality {
  attribute: "userName" | "externalId" | "id" | "groups.value";
  value: string;
}

/** A filter read from its text: the predicate, and the equality an index answers when it is one. Throws `invalidFilter` when it does not parse. */
export function resourceFilter(text: string | undefined): { matches: (resource: ScimResource) => boolean; indexed: IndexedEquality | null } {
  if (text === undefined || text.trim() === "") return { matches: () => true, indexed: null };
  let parsed: Filter;
  try {
    parsed = parse(text);
  } catch (error) {
    throw new ScimError(400, "invalidFilter", `The filter does not parse: ${(error as Error).message}`);
  }
  const canonical = canonicalFilter(parsed);
  const matches = compiledFilter(canonical);
  const indexed =
    canonical.op === "eq" && typeof canonical.compValue === "string" && ["userName", "externalId", "id", "groups.value"].includes(canonical.attrPath)
      ? { attribute: canonical.attrPath as IndexedEquality["attribute"], value: canonical.compValue }
      : null;
  return { matches: (resource) => matches(comparable(resource)), indexed };
}

// Projections (RFC 7644 §3.9): `attributes` keeps only the named ones (and id, schemas, meta's
// resourceType), `excludedAttributes` drops them; names in any case, sub-attributes with a dot.

const names = (value: string | string[] | undefined) =>
  (Array.isArray(value) ? value : (value ?? "").split(","))
    .map((name) => name.trim())
    .filter(Boolean)
    .map(canonicalPath);

export function project(resource: ScimResource, query: { attributes?: string | string[]; excludedAttributes?: string | string[] }): Record<string, unknown> {
  const wanted = names(query.attributes);
  const excluded = names(query.excludedAttributes);
  let result: Record<string, unknown> = resource;
  if (wanted.length > 0) {
    result = { schemas: resource.schemas, id: resource.id };
    for (const path of wanted) {
      const [head, tail] = path.split(".");
      if (!Object.hasOwn(resource, head)) continue;
      if (tail === undefined) result[head] = resource[head];
      else result[head] = pick(resource[head], tail, result[head]);
    }
  }
  if (excluded.length > 0) {
    result = { ...result };
    for (const path of excluded) {
      const [head, tail] = path.split(".");
      if (head === "id" || head === "schemas") continue;
      if (tail === undefined) delete result[head];
      else result[head] = omit(result[head], tail);
    }
  }
  return result;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** A sub-attribute kept from a complex attribute (or each item of a multi-valued one); a simple value has no sub-attributes, so nothing of it is kept. */
function pick(value: unknown, key: string, into: unknown): unknown {
  const picked = (item: unknown, already: unknown) => ({ ...(isRecord(already) ? already : {}), ...(isRecord(item) && Object.hasOwn(item, key) ? { [key]: item[key] } : {}) });
  if (Array.isArray(value)) return value.some(isRecord) ? value.map((item, index) => picked(item, Array.isArray(into) ? into[index] : undefined)) : into;
  if (isRecord(value)) return picked(value, into);
  return into;
}

function omit(value: unknown, key: string): unknown {
  const without = (item: unknown) => (isRecord(item) ? Object.fromEntries(Object.entries(item).filter(([name]) => name !== key)) : item);
  if (Array.isArray(value)) return value.map(without);
  return without(value);
}

/** Most resources one list answers (ServiceProviderConfig's filter.maxResults). */
export const MAX_RESULTS = 200;
const DEFAULT_COUNT = 100;

/** A list's window: 1-based startIndex, count at most 200 (100 when not given). */
export function listWindow(query: { startIndex?: number; count?: number }) {
  return { startIndex: Math.max(1, query.startIndex ?? 1), count: Math.min(MAX_RESULTS, Math.max(0, query.count ?? DEFAULT_COUNT)) };
}

/** A ListResponse of a page already read. */
export function listPage(page: ScimResource[], totalResults: number, startIndex: number, query: { attributes?: string | string[]; excludedAttributes?: string | string[] }) {
  return { schemas: [SCIM_LIST], totalResults, startIndex, itemsPerPage: page.length, Resources: page.map((resource) => project(resource, query)) };
}

/** A ListResponse page of resources all in memory, in a stable order (created, then id). */
export function listResponse(resources: ScimResource[], query: { startIndex?: number; count?: number; attributes?: string | string[]; excludedAttributes?: string | string[] }) {
  const { page, totalResults, startIndex } = orderedPage(resources, query);
  return listPage(page, totalResults, startIndex, query);
}

/** The page a list asks for of resources all in memory, in a stable order (created, then id). */
export function orderedPage(resources: ScimResource[], query: { startIndex?: number; count?: number }) {
  const ordered = [...resources].sort((a, b) => String(a.meta.created).localeCompare(String(b.meta.created)) || a.id.localeCompare(b.id));
  const { startIndex, count } = listWindow(query);
  return { page: ordered.slice(startIndex - 1, startIndex - 1 + count), totalResults: ordered.length, startIndex };
}
