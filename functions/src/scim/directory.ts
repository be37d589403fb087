import type { Transaction } from "firebase-admin/firestore";
import type { UserRecord } from "firebase-admin/auth";
import { ScimError as PatchError, scimPatch, type ScimPatchOperation } from "scim-patch";
import { approximateDocumentBytes, businessStore, MAX_BUSINESS_DOCUMENT_BYTES, memberOf, type BusinessRecord, type MemberRecord, type ScimGroupRecord, type ScimProfile } from "../accounts/business-store";
import type { SubscriptionRecord } from "../accounts/subscription-store";
import { inBusinessTransaction, readBusiness } from "../businesses/service";
import { auditLog, type AuditEvent } from "../core/audit-log";
import { withinDeadline } from "../core/deadline";
import { outboundEvent } from "../core/event-types";
import { randomBase62 } from "../core/secret-tokens";
import { pathNamesPrototype } from "../core/validation";
import type { Deps } from "../deps";
import { emailInDomains, verifiedDomainsOf } from "../domains/service";
import {
  groupResource,
  invalidValue,
  listResponse,
  mutability,
  notFound,
  project,
  resourceFilter,
  scimMembers,
  ScimError,
  uniqueness,
  userResource,
  type ScimResource,
} from "./resources";
import { groupNamesOf, managesAccount, managedUserId, reconcileDirectory, seatForNewcomer } from "./rules";
import { scimGroupInput, scimUserInput, type ScimGroupInput, type ScimUserInput } from "./schemas";
import { scimBaseUrl, type ScimCaller } from "./tokens";

/**
 * SCIM Users and Groups of a business (§22). Every change is one transaction on the business
 * document, which holds members, seats, SCIM profiles and groups, so seats stay exact and a
 * duplicate userName has one winner under any concurrency; the audit entry of the change carries
 * its `business.member.*` events. Auth users are found or made before it, and disabled or enabled
 * after it (again on a retry, so a crash in between is mended by the provider's next sync).
 */

type Query = { attributes?: string | string[]; excludedAttributes?: string | string[] };
type Projected = { resource: Record<string, unknown>; version: string; location: string };
export type ScimDeps = Deps;

/** The most SCIM groups one business may have, and members all its groups may list together; the document's size is checked at every change too. */
export const MAX_GROUPS = 300;
export const MAX_GROUP_MEMBERSHIPS = 10_000;

const answer = (resource: ScimResource, query: Query): Projected => ({ resource: project(resource, query), version: String(resource.meta.version), location: String(resource.meta.location) });

function present(business: BusinessRecord | null): BusinessRecord {
  // The token outlived its business (an operator deleted it): nothing to provision into.
  if (!business) throw new ScimError(401, null, "The SCIM token's business no longer exists.");
  return business;
}

function assertVersion(resource: ScimResource, ifMatch: string | undefined): void {
  if (ifMatch === undefined || ifMatch.trim() === "*") return;
  const wanted = ifMatch.split(",").map((tag) => tag.trim());
  if (!wanted.includes(String(resource.meta.version))) throw new ScimError(412, null, `The resource has changed: its version is ${String(resource.meta.version)}.`);
}

const withMembers = (business: BusinessRecord, changed: MemberRecord[]): BusinessRecord => {
  const byUid = new Map(changed.map((member) => [member.uid, member]));
  const known = new Set(business.members.map((member) => member.uid));
  return { ...business, members: [...business.members.map((member) => byUid.get(member.uid) ?? member), ...changed.filter((member) => !known.has(member.uid))] };
};

const memberPath = (businessId: string, uid: string) => `/businesses/${businessId}/members/${uid}`;

/** The events of members changed by a SCIM request, from their records before and after. */
function memberEvents(businessId: string, before: BusinessRecord, after: MemberRecord[]): AuditEvent["emits"] {
  const owners = [{ kind: "business" as const, id: businessId }];
  return after.flatMap((member) => {
    const previous = memberOf(before, member.uid);
    const data = { businessId, uid: member.uid, role: member.role, seat: member.seat, source: member.source, path: memberPath(businessId, member.uid) };
    if (!previous) return [outboundEvent("business.member.joined", owners, { ...data, ...(member.suspended ? { suspended: true } : {}) })];
    const changed = previous.role !== member.role || previous.seat !== member.seat || previous.suspended !== member.suspended;
    if (!changed) return [];
    return [
      outboundEvent("business.member.updated", owners, {
        ...data,
        ...(previous.suspended !== member.suspended ? { suspended: member.suspended } : {}),
        ...(previous.role !== member.role ? { previousRole: previous.role } : {}),
      }),
    ];
  });
}

/** Applies the group-driven roles and seats to a business after a change, returning every member changed. */
function settle(tx: Transaction, deps: Deps, businessId: string, business: BusinessRecord, subscription: SubscriptionRecord | null, changed: MemberRecord[], now: Date): MemberRecord[] {
  const interim = withMembers(business, changed);
  const reconciled = reconcileDirectory(interim, subscription, now);
  const all = new Map([...changed, ...reconciled].map((member) => [member.uid, member]));
  if (approximateDocumentBytes(withMembers(interim, reconciled)) > MAX_BUSINESS_DOCUMENT_BYTES) {
    throw invalidValue("This business's directory is full: its members, SCIM profiles and groups would pass the most one business holds (about 1,500 SCIM users). Remove users or groups first, or ask the operators.");
  }
  for (const member of all.values()) businessStore(deps.db).putMember(tx, businessId, member);
  return [...all.values()];
}

// Users

function profileOf(input: ScimUserInput, created: Date, now: Date): ScimProfile {
  const name = Object.fromEntries(
    Object.entries(input.name ?? {}).filter((entry): entry is [string, string] => ["formatted", "familyName", "givenName", "middleName", "honorificPrefix", "honorificSuffix"].includes(entry[0]) && typeof entry[1] === "string"),
  );
  return {
    userName: input.userName,
    externalId: input.externalId ?? null,
    displayName: input.displayName ?? null,
    name,
    emails: (input.emails ?? []).map((email) => ({ value: email.value, ...(email.type ? { type: email.type } : {}), ...(typeof email.primary === "boolean" ? { primary: email.primary } : {}) })),
    created,
    lastModified: now,
  };
}

const sameProfile = (a: ScimProfile, b: ScimProfile) => JSON.stringify({ ...a, created: 0, lastModified: 0 }) === JSON.stringify({ ...b, created: 0, lastModified: 0 });

function assertUnique(business: BusinessRecord, uid: string | null, input: ScimUserInput): void {
  for (const member of scimMembers(business)) {
    if (member.uid === uid) continue;
    if (member.scim.userName === input.userName) throw uniqueness(`A User with userName '${input.userName}' exists (id ${member.uid}).`);
    if (input.externalId && member.scim.externalId === input.externalId) throw uniqueness(`A User with externalId '${input.externalId}' exists (id ${member.uid}).`);
  }
}

function assertInDomains(business: BusinessRecord, email: string): void {
  const domains = verifiedDomainsOf(business);
  if (domains.length > 0 && !emailInDomains(email, domains)) {
    throw invalidValue(`userName ${email} is not in a verified domain of this business (${domains.join(", ")}).`);
  }
}

/** The member after `active` is set: suspension frees the seat; restoring gives one when free. */
function withActive(business: BusinessRecord, subscription: SubscriptionRecord | null, member: MemberRecord, active: boolean, now: Date): MemberRecord {
  if (active === !member.suspended) return member;
  if (member.role === "owner" && !active) throw mutability("Owners are managed in the product, not by SCIM: make them an admin or member there first.");
  if (!active) return { ...member, suspended: true, seat: false, seatAssignedAt: null };
  const seat = seatForNewcomer(business, subscription, [...groupNamesOf(business, member.uid)], now);
  return { ...member, suspended: false, seat, seatAssignedAt: seat ? now : null };
}

/**
 * Finds the Firebase Auth user of an email, or makes a managed one (email verified, no password,
 * the uid that says this business made it); an account is made only for an email in a domain the
 * business has verified.
 */
async function authUserFor(deps: Deps, business: BusinessRecord, input: ScimUserInput): Promise<UserRecord> {
  const { auth } = deps;
  const byEmail = () => withinDeadline("Auth", auth.getUserByEmail(input.userName));
  try {
    return await byEmail();
  } catch (error) {
    if ((error as { code?: string }).code !== "auth/user-not-found") throw error;
  }
  if (!emailInDomains(input.userName, verifiedDomainsOf(business))) {
    throw invalidValue(`No account has the email ${input.userName}, and SCIM makes accounts only in a domain this business has verified: verify the domain first (POST /businesses/${business.id}/domains).`);
  }
  const displayName = input.displayName ?? ([input.name?.givenName, input.name?.familyName].filter(Boolean).join(" ") || undefined);
  const uid = managedUserId(business.id, input.userName);
  try {
    return await withinDeadline("Auth", auth.createUser({ uid, email: input.userName, emailVerified: true, ...(displayName ? { displayName } : {}) }));
  } catch (error) {
    // Another request made it first: the same user, found by its email.
    const code = (error as { code?: string }).code;
    if (code === "auth/email-already-exists" || code === "auth/uid-already-exists") return byEmail();
    throw error;
  }
}

/** After the change: a managed user is disabled while suspended or removed, enabled while active. */
async function applyAuthState(deps: Deps, member: MemberRecord, removed = false): Promise<void> {
  if (!member.managed) return;
  await withinDeadline("Auth", deps.auth.updateUser(member.uid, { disabled: removed || member.suspended }));
}

export async function listUsers(deps: Deps, caller: ScimCaller, query: Query & { filter?: string; startIndex?: number; count?: number }) {
  const matches = resourceFilter(query.filter);
  const { business: stored } = await readBusiness(deps, null, caller.businessId);
  const business = present(stored);
  const base = scimBaseUrl(deps);
  return listResponse(scimMembers(business).map((member) => userResource(member, business, base)).filter(matches), query);
}

export async function getUser(deps: Deps, caller: ScimCaller, id: string, query: Query): Promise<Projected> {
  const { business: stored } = await readBusiness(deps, null, caller.businessId);
  const business = present(stored);
  const member = scimMembers(business).find((candidate) => candidate.uid === id);
  if (!member) throw notFound("User", id);
  return answer(userResource(member, business, scimBaseUrl(deps)), query);
}

export async function createUser(deps: Deps, caller: ScimCaller, body: unknown, query: Query): Promise<Projected> {
  const input = parseScim(scimUserInput, body);
  const { businessId } = caller;
  const { business: before } = await readBusiness(deps, null, businessId);
  assertInDomains(present(before), input.userName);
  assertUnique(present(before), null, input);
  const user = await authUserFor(deps, present(before), input);
  const now = deps.clock();
  const { business, member } = await inBusinessTransaction(deps, businessId, (tx, state) => {
    const business = present(state.business);
    assertInDomains(business, input.userName);
    assertUnique(business, null, input);
    const existing = memberOf(business, user.uid);
    if (existing?.scim) throw uniqueness(`A User with userName '${input.userName}' exists (id ${user.uid}).`);
    const active = input.active ?? true;
    const profile = profileOf(input, now, now);
    let member: MemberRecord;
    if (existing) {
      member = { ...withActive(business, state.subscription, existing, active, now), scim: profile };
    } else {
      const seat = active && seatForNewcomer(business, state.subscription, [], now);
      const managed = managesAccount(businessId, user.uid, input.userName);
      member = { uid: user.uid, role: "member", joinedAt: now, seat, seatAssignedAt: seat ? now : null, source: "scim", suspended: !active, managed, scim: profile };
    }
    const changed = settle(tx, deps, businessId, business, state.subscription, [member], now);
    auditLog(deps.db).record(tx, caller.actor, { action: "scim.user.create", target: businessId, details: { uid: user.uid, userName: input.userName, linked: Boolean(existing), active }, emits: memberEvents(businessId, business, changed) }, now);
    return { business: withMembers(business, changed), member: changed.find((candidate) => candidate.uid === user.uid)! };
  });
  await applyAuthState(deps, member);
  return answer(userResource(member as MemberRecord & { scim: ScimProfile }, business, scimBaseUrl(deps)), query);
}

/** PUT and PATCH of a User: the next representation from the current one, applied in one transaction. */
async function changeUser(deps: Deps, caller: ScimCaller, id: string, ifMatch: string | undefined, next: (current: ScimResource) => ScimUserInput, query: Query): Promise<Projected> {
  const { businessId } = caller;
  const now = deps.clock();
  const base = scimBaseUrl(deps);
  const { business, member } = await inBusinessTransaction(deps, businessId, (tx, state) => {
    const business = present(state.business);
    const current = scimMembers(business).find((candidate) => candidate.uid === id);
    if (!current) throw notFound("User", id);
    const resource = userResource(current, business, base);
    assertVersion(resource, ifMatch);
    const input = next(resource);
    if (input.userName !== current.scim.userName) throw mutability(`userName is the member's sign-in email (${current.scim.userName}) and cannot change; deprovision this User and provision the new email.`);
    assertUnique(business, id, input);
    const active = input.active ?? !current.suspended;
    const profile = profileOf(input, current.scim.created, now);
    const activated = withActive(business, state.subscription, current, active, now);
    if (activated === current && sameProfile(profile, current.scim)) return { business, member: current as MemberRecord };
    const member = { ...activated, scim: profile };
    const changed = settle(tx, deps, businessId, business, state.subscription, [member], now);
    auditLog(deps.db).record(tx, caller.actor, { action: "scim.user.update", target: businessId, details: { uid: id, active }, emits: memberEvents(businessId, business, changed) }, now);
    return { business: withMembers(business, changed), member: changed.find((candidate) => candidate.uid === id)! };
  });
  await applyAuthState(deps, member);
  return answer(userResource(member as MemberRecord & { scim: ScimProfile }, business, base), query);
}

export const replaceUser = (deps: Deps, caller: ScimCaller, id: string, ifMatch: string | undefined, body: unknown, query: Query) =>
  changeUser(deps, caller, id, ifMatch, () => parseScim(scimUserInput, body), query);

export const patchUser = (deps: Deps, caller: ScimCaller, id: string, ifMatch: string | undefined, body: unknown, query: Query) => {
  const operations = patchOperations(body);
  return changeUser(deps, caller, id, ifMatch, (current) => parseScim(scimUserInput, applyPatch(current, operations)), query);
};

export async function deleteUser(deps: Deps, caller: ScimCaller, id: string, ifMatch: string | undefined): Promise<void> {
  const { businessId } = caller;
  const now = deps.clock();
  const removed = await inBusinessTransaction(deps, businessId, (tx, state) => {
    const business = present(state.business);
    const member = scimMembers(business).find((candidate) => candidate.uid === id);
    if (!member) throw notFound("User", id);
    assertVersion(userResource(member, business, scimBaseUrl(deps)), ifMatch);
    if (member.role === "owner") throw mutability("Owners are managed in the product, not by SCIM: make them an admin or member there first.");
    const store = businessStore(deps.db);
    store.removeMember(tx, businessId, id);
    for (const group of business.scimGroups.filter((candidate) => candidate.memberIds.includes(id))) {
      store.putScimGroup(tx, businessId, { ...group, memberIds: group.memberIds.filter((uid) => uid !== id), lastModified: now });
    }
    const left = outboundEvent("business.member.left", [{ kind: "business", id: businessId }], { businessId, uid: id, role: member.role, seat: member.seat, source: member.source, path: `/businesses/${businessId}/members` });
    auditLog(deps.db).record(tx, caller.actor, { action: "scim.user.delete", target: businessId, details: { uid: id, userName: member.scim.userName }, emits: [left] }, now);
    return member;
  });
  await applyAuthState(deps, removed, true);
}

// Groups

function groupOf(business: BusinessRecord, input: ScimGroupInput, existing: ScimGroupRecord | null, now: Date): ScimGroupRecord {
  const others = business.scimGroups.filter((group) => group.id !== existing?.id);
  if (others.some((group) => group.displayName.toLowerCase() === input.displayName.toLowerCase())) throw uniqueness(`A Group named '${input.displayName}' exists.`);
  if (input.externalId && others.some((group) => group.externalId === input.externalId)) throw uniqueness(`A Group with externalId '${input.externalId}' exists.`);
  const users = new Set(scimMembers(business).map((member) => member.uid));
  const memberIds = [...new Set((input.members ?? []).map((member) => member.value))];
  const unknown = memberIds.find((uid) => !users.has(uid));
  if (unknown) throw invalidValue(`Group member '${unknown}' is not a User of this business; provision the User first.`);
  if (!existing && others.length >= MAX_GROUPS) throw invalidValue(`This business has ${MAX_GROUPS} Groups, the most it may; delete one first.`);
  const memberships = others.reduce((sum, group) => sum + group.memberIds.length, 0) + memberIds.length;
  if (memberships > MAX_GROUP_MEMBERSHIPS) throw invalidValue(`The Groups of this business would list ${memberships} members together, more than ${MAX_GROUP_MEMBERSHIPS}.`);
  return { id: existing?.id ?? randomBase62(20), displayName: input.displayName, externalId: input.externalId ?? null, memberIds, created: existing?.created ?? now, lastModified: now };
}

const sameGroup = (a: ScimGroupRecord, b: ScimGroupRecord) => a.displayName === b.displayName && a.externalId === b.externalId && JSON.stringify(a.memberIds) === JSON.stringify(b.memberIds);

const withGroup = (business: BusinessRecord, group: ScimGroupRecord | null, removedId?: string): BusinessRecord => ({
  ...business,
  scimGroups: [...business.scimGroups.filter((candidate) => candidate.id !== (group?.id ?? removedId)), ...(group ? [group] : [])],
});

export async function listGroups(deps: Deps, caller: ScimCaller, query: Query & { filter?: string; startIndex?: number; count?: number }) {
  const matches = resourceFilter(query.filter);
  const { business: stored } = await readBusiness(deps, null, caller.businessId);
  const business = present(stored);
  const base = scimBaseUrl(deps);
  return listResponse(business.scimGroups.map((group) => groupResource(group, business, base)).filter(matches), query);
}

export async function getGroup(deps: Deps, caller: ScimCaller, id: string, query: Query): Promise<Projected> {
  const { business: stored } = await readBusiness(deps, null, caller.businessId);
  const business = present(stored);
  const group = business.scimGroups.find((candidate) => candidate.id === id);
  if (!group) throw notFound("Group", id);
  return answer(groupResource(group, business, scimBaseUrl(deps)), query);
}

/** A group's change and the roles and seats it moves, in one transaction. */
function commitGroup(tx: Transaction, deps: Deps, caller: ScimCaller, business: BusinessRecord, subscription: SubscriptionRecord | null, group: ScimGroupRecord | null, removedId: string | null, action: string, now: Date) {
  const { businessId } = caller;
  const store = businessStore(deps.db);
  if (group) store.putScimGroup(tx, businessId, group);
  else if (removedId) store.deleteScimGroup(tx, businessId, removedId);
  const after = withGroup(business, group, removedId ?? undefined);
  const changed = settle(tx, deps, businessId, after, subscription, [], now);
  auditLog(deps.db).record(tx, caller.actor, { action, target: businessId, details: { groupId: group?.id ?? removedId, ...(group ? { displayName: group.displayName, members: group.memberIds.length } : {}) }, emits: memberEvents(businessId, business, changed) }, now);
  return withMembers(after, changed);
}

export async function createGroup(deps: Deps, caller: ScimCaller, body: unknown, query: Query): Promise<Projected> {
  const input = parseScim(scimGroupInput, body);
  const now = deps.clock();
  const { business, group } = await inBusinessTransaction(deps, caller.businessId, (tx, state) => {
    const business = present(state.business);
    const group = groupOf(business, input, null, now);
    return { business: commitGroup(tx, deps, caller, business, state.subscription, group, null, "scim.group.create", now), group };
  });
  return answer(groupResource(group, business, scimBaseUrl(deps)), query);
}

async function changeGroup(deps: Deps, caller: ScimCaller, id: string, ifMatch: string | undefined, next: (current: ScimResource) => ScimGroupInput, query: Query): Promise<Projected> {
  const now = deps.clock();
  const base = scimBaseUrl(deps);
  const { business, group } = await inBusinessTransaction(deps, caller.businessId, (tx, state) => {
    const business = present(state.business);
    const current = business.scimGroups.find((candidate) => candidate.id === id);
    if (!current) throw notFound("Group", id);
    const resource = groupResource(current, business, base);
    assertVersion(resource, ifMatch);
    const group = groupOf(business, next(resource), current, now);
    if (sameGroup(group, current)) return { business, group: current };
    return { business: commitGroup(tx, deps, caller, business, state.subscription, group, null, "scim.group.update", now), group };
  });
  return answer(groupResource(group, business, base), query);
}

export const replaceGroup = (deps: Deps, caller: ScimCaller, id: string, ifMatch: string | undefined, body: unknown, query: Query) =>
  changeGroup(deps, caller, id, ifMatch, () => parseScim(scimGroupInput, body), query);

export const patchGroup = (deps: Deps, caller: ScimCaller, id: string, ifMatch: string | undefined, body: unknown, query: Query) => {
  const operations = patchOperations(body);
  return changeGroup(deps, caller, id, ifMatch, (current) => parseScim(scimGroupInput, applyPatch(current, operations)), query);
};

export async function deleteGroup(deps: Deps, caller: ScimCaller, id: string, ifMatch: string | undefined): Promise<void> {
  const now = deps.clock();
  await inBusinessTransaction(deps, caller.businessId, (tx, state) => {
    const business = present(state.business);
    const group = business.scimGroups.find((candidate) => candidate.id === id);
    if (!group) throw notFound("Group", id);
    assertVersion(groupResource(group, business, scimBaseUrl(deps)), ifMatch);
    commitGroup(tx, deps, caller, business, state.subscription, null, id, "scim.group.delete", now);
  });
}

/** Settings changed (PUT /businesses/:id/scim/settings): roles and seats follow at once, in the same transaction. */
export function settleDirectory(tx: Transaction, deps: Deps, businessId: string, business: BusinessRecord, subscription: SubscriptionRecord | null, now: Date) {
  const changed = settle(tx, deps, businessId, business, subscription, [], now);
  return { changed, emits: memberEvents(businessId, business, changed) };
}

// Bodies and PATCH

/** A body through its schema; what it refuses is 400 invalidValue with the first problem named. */
export function parseScim<T>(schema: { safeParse(value: unknown): { success: true; data: T } | { success: false; error: { issues: Array<{ path: PropertyKey[]; message: string }> } } }, body: unknown): T {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue.path.length > 0 ? `${issue.path.map(String).join(".")}: ` : "";
  throw invalidValue(`${where}${issue.message}`);
}

const PATCH_OPS = new Set(["add", "replace", "remove"]);

/** PATCH operations as RFC 7644 names them: operation names in any case (Microsoft Entra ID sends "Replace"). */
function patchOperations(body: unknown): ScimPatchOperation[] {
  const operations = (body as { Operations?: unknown })?.Operations;
  if (!Array.isArray(operations) || operations.length === 0) throw new ScimError(400, "invalidSyntax", "A PATCH body needs Operations: a list of add, replace or remove.");
  if (operations.length > 1_000) throw new ScimError(400, "invalidSyntax", "A PATCH body may have at most 1,000 operations.");
  return operations.map((operation: unknown) => {
    const { op, path, value } = (operation ?? {}) as { op?: unknown; path?: unknown; value?: unknown };
    const name = typeof op === "string" ? op.toLowerCase() : "";
    if (!PATCH_OPS.has(name)) throw new ScimError(400, "invalidSyntax", `Unknown PATCH operation '${String(op)}': use add, replace or remove.`);
    if (path !== undefined && (typeof path !== "string" || path.length > 500)) throw new ScimError(400, "invalidPath", "A PATCH path must be a string of at most 500 characters.");
    if (typeof path === "string" && pathNamesPrototype(path)) throw new ScimError(400, "invalidPath", `'${path}' is not an attribute path: __proto__, constructor and prototype are never accepted.`);
    if (name === "remove" && path === undefined) throw new ScimError(400, "noTarget", "A remove operation needs a path.");
    return { op: name, ...(path !== undefined ? { path } : {}), ...(value !== undefined ? { value } : {}) } as ScimPatchOperation;
  });
}

/** The resource with the operations applied (scim-patch); what it refuses is a SCIM 400 with its scimType. */
function applyPatch(resource: ScimResource, operations: ScimPatchOperation[]): unknown {
  const { meta: _meta, groups: _groups, ...patchable } = resource;
  try {
    return scimPatch(structuredClone(patchable) as never, operations, { mutateDocument: true, treatMissingAsAdd: true });
  } catch (error) {
    // scim-patch works on a copy of our own representation, so whatever it throws comes from the operations.
    throw new ScimError(400, error instanceof PatchError ? (error.scimCode ?? "invalidValue") : "invalidPath", (error as Error).message);
  }
}
