import type { Transaction } from "firebase-admin/firestore";
import { businessStore } from "../accounts/business-store";
import type { BusinessRecord, ScimGroupRecord } from "../accounts/business-records";
import type { SubscriptionRecord } from "../accounts/subscription-store";
import { inBusinessTransaction, readBusiness } from "../businesses/service";
import { auditLog } from "../core/audit-log";
import { randomBase62 } from "../core/secret-tokens";
import type { Deps } from "../deps";
import { groupResource, invalidValue, listResponse, notFound, resourceFilter, scimMembers, uniqueness, type ScimResource } from "./resources";
import { scimGroupInput, type ScimGroupInput } from "./schemas";
import { scimBaseUrl, type ScimCaller } from "./tokens";
import { answer, assertVersion, MAX_GROUP_MEMBERSHIPS, MAX_GROUPS, memberEvents, present, settle, withMembers, type Projected, type Query } from "./directory";
import { applyPatch, parseScim, patchOperations } from "./patch";

/** SCIM Groups of a business (§22): a group's change and the roles and seats it moves, in one transaction. */

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
