import type { Transaction } from "firebase-admin/firestore";
import { businessStore } from "../accounts/business-store";
import type { BusinessRecord, MemberRecord, ScimGroupRecord } from "../accounts/business-records";
import { memberStore } from "../accounts/member-store";
import { inBusinessTransaction, readBusiness } from "../businesses/membership";
import { auditLog } from "../core/audit-log";
import { documentIdProblem } from "../core/documents";
import { randomBase62 } from "../core/secret-tokens";
import type { Deps } from "../deps";
import { groupResource, invalidValue, isScimMember, listResponse, notFound, resourceFilter, uniqueness, type ScimResource } from "./resources";
import { scimGroupInput, type ScimGroupInput } from "./schemas";
import { scimBaseUrl, type ScimCaller } from "./tokens";
import type { SubscriptionRecord } from "../accounts/subscription-store";
import type { MemberChange } from "../seats/ledger";
import { answer, assertVersion, MAX_GROUPS, MAX_MEMBERS_MOVED, present, settle, type Projected, type Query } from "./directory";
import { memberEvents } from "../seats/member-events";
import { applyPatch, parseScim, patchOperations } from "./patch";

/**
 * SCIM Groups of a business (§22): a group lives in the business's document, its membership on
 * its members' documents (§25); a group's change and the roles and seats it moves are one
 * transaction.
 */

function groupOf(business: BusinessRecord, input: ScimGroupInput, existing: ScimGroupRecord | null, now: Date): ScimGroupRecord {
  const others = business.scimGroups.filter((group) => group.id !== existing?.id);
  if (others.some((group) => group.displayName.toLowerCase() === input.displayName.toLowerCase())) throw uniqueness(`A Group named '${input.displayName}' exists.`);
  if (input.externalId && others.some((group) => group.externalId === input.externalId)) throw uniqueness(`A Group with externalId '${input.externalId}' exists.`);
  if (!existing && others.length >= MAX_GROUPS) throw invalidValue(`This business has ${MAX_GROUPS} Groups, the most it may; delete one first.`);
  return { id: existing?.id ?? randomBase62(20), displayName: input.displayName, externalId: input.externalId ?? null, created: existing?.created ?? now, lastModified: now };
}

const memberIdsOf = (input: ScimGroupInput) => [...new Set((input.members ?? []).map((member) => member.value))];

/**
 * The members a group's new member list moves in or out, read in the transaction: every one
 * must be a User of this business, and one request moves at most MAX_MEMBERS_MOVED.
 */
async function movedMembers(deps: Deps, tx: Transaction, businessId: string, groupId: string, current: MemberRecord[], wanted: string[]): Promise<MemberChange[]> {
  const now = new Set(current.map((member) => member.uid));
  const wantedSet = new Set(wanted);
  const joining = wanted.filter((uid) => !now.has(uid));
  const leaving = current.filter((member) => !wantedSet.has(member.uid));
  if (joining.length + leaving.length > MAX_MEMBERS_MOVED) {
    throw invalidValue(`This change moves ${joining.length + leaving.length} members into or out of the Group; send at most ${MAX_MEMBERS_MOVED} per request.`);
  }
  const invalid = joining.find((uid) => documentIdProblem(uid) !== null);
  if (invalid !== undefined) throw invalidValue(`Group member '${invalid}' is not a User of this business; provision the User first.`);
  const found = await memberStore(deps.db).getMany(tx, businessId, joining);
  const unknown = found.findIndex((member) => !isScimMember(member));
  if (unknown !== -1) throw invalidValue(`Group member '${joining[unknown]}' is not a User of this business; provision the User first.`);
  return [
    ...found.map((member) => ({ before: member!, after: { ...member!, groups: [...member!.groups, groupId] } })),
    ...leaving.map((member) => ({ before: member, after: { ...member, groups: member.groups.filter((id) => id !== groupId) } })),
  ];
}

/** Whether a filter or projection needs the groups' members (reading them costs a query per group). */
const needsMembers = (query: Query & { filter?: string }) => /members/i.test(query.filter ?? "") || !/(^|,)\s*members\s*(,|$)/i.test(String(query.excludedAttributes ?? ""));

export async function listGroups(deps: Deps, caller: ScimCaller, query: Query & { filter?: string; startIndex?: number; count?: number }) {
  const { matches } = resourceFilter(query.filter);
  const { business: stored } = await readBusiness(deps, null, caller.businessId);
  const business = present(stored);
  const base = scimBaseUrl(deps);
  const withMembers = needsMembers(query);
  const members = await Promise.all(business.scimGroups.map((group) => (withMembers ? memberStore(deps.db).inGroup(null, business.id, group.id) : [])));
  return listResponse(business.scimGroups.map((group, index) => groupResource(group, members[index], base)).filter(matches), query);
}

export async function getGroup(deps: Deps, caller: ScimCaller, id: string, query: Query): Promise<Projected> {
  const { business: stored } = await readBusiness(deps, null, caller.businessId);
  const business = present(stored);
  const group = business.scimGroups.find((candidate) => candidate.id === id);
  if (!group) throw notFound("Group", id);
  return answer(groupResource(group, await memberStore(deps.db).inGroup(null, business.id, id), scimBaseUrl(deps)), query);
}

/** A group's change and the roles and seats it moves, in one transaction (`settle` reads what it needs before the writes). */
async function commitGroup(tx: Transaction, deps: Deps, caller: ScimCaller, business: BusinessRecord, subscription: SubscriptionRecord | null, group: ScimGroupRecord | null, removedId: string | null, moved: MemberChange[], action: string, now: Date) {
  const { businessId } = caller;
  const after = { ...business, scimGroups: [...business.scimGroups.filter((candidate) => candidate.id !== (group?.id ?? removedId)), ...(group ? [group] : [])] };
  const changes = await settle(tx, deps, after, subscription, moved, now);
  const store = businessStore(deps.db);
  if (group) store.putScimGroup(tx, businessId, group);
  else if (removedId) store.deleteScimGroup(tx, businessId, removedId);
  const members = group ? changes.filter((change) => change.after.groups.includes(group.id)).length : 0;
  auditLog(deps.db).record(tx, caller.actor, { action, target: businessId, details: { groupId: group?.id ?? removedId, ...(group ? { displayName: group.displayName, members } : {}) }, emits: memberEvents(businessId, changes) }, now);
  return changes;
}

/** The members of a group after a change: those who stay, and those who came. */
const membersAfter = (current: MemberRecord[], changes: MemberChange[], groupId: string) => {
  const changed = new Map(changes.map(({ after }) => [after.uid, after]));
  const stayed = current.filter((member) => !changed.has(member.uid));
  return [...stayed, ...changes.map(({ after }) => after)].filter((member) => member.groups.includes(groupId));
};

export async function createGroup(deps: Deps, caller: ScimCaller, body: unknown, query: Query): Promise<Projected> {
  const input = parseScim(scimGroupInput, body);
  const now = deps.clock();
  const { group, members } = await inBusinessTransaction(deps, caller.businessId, async (tx, state) => {
    const business = present(state.business);
    const group = groupOf(business, input, null, now);
    const moved = await movedMembers(deps, tx, business.id, group.id, [], memberIdsOf(input));
    const changes = await commitGroup(tx, deps, caller, business, state.subscription, group, null, moved, "scim.group.create", now);
    return { group, members: membersAfter([], changes, group.id) };
  });
  return answer(groupResource(group, members, scimBaseUrl(deps)), query);
}

async function changeGroup(deps: Deps, caller: ScimCaller, id: string, ifMatch: string | undefined, next: (current: ScimResource) => ScimGroupInput, query: Query): Promise<Projected> {
  const now = deps.clock();
  const base = scimBaseUrl(deps);
  const { group, members } = await inBusinessTransaction(deps, caller.businessId, async (tx, state) => {
    const business = present(state.business);
    const current = business.scimGroups.find((candidate) => candidate.id === id);
    if (!current) throw notFound("Group", id);
    const currentMembers = await memberStore(deps.db).inGroup(tx, business.id, id);
    const resource = groupResource(current, currentMembers, base);
    assertVersion(resource, ifMatch);
    const input = next(resource);
    const group = groupOf(business, input, current, now);
    const moved = await movedMembers(deps, tx, business.id, id, currentMembers, memberIdsOf(input));
    if (moved.length === 0 && group.displayName === current.displayName && group.externalId === current.externalId) return { group: current, members: currentMembers };
    const changes = await commitGroup(tx, deps, caller, business, state.subscription, group, null, moved, "scim.group.update", now);
    return { group, members: membersAfter(currentMembers, changes, id) };
  });
  return answer(groupResource(group, members, base), query);
}

export const replaceGroup = (deps: Deps, caller: ScimCaller, id: string, ifMatch: string | undefined, body: unknown, query: Query) =>
  changeGroup(deps, caller, id, ifMatch, () => parseScim(scimGroupInput, body), query);

export const patchGroup = (deps: Deps, caller: ScimCaller, id: string, ifMatch: string | undefined, body: unknown, query: Query) => {
  const operations = patchOperations(body);
  return changeGroup(deps, caller, id, ifMatch, (current) => parseScim(scimGroupInput, applyPatch(current, operations)), query);
};

export async function deleteGroup(deps: Deps, caller: ScimCaller, id: string, ifMatch: string | undefined): Promise<void> {
  const now = deps.clock();
  await inBusinessTransaction(deps, caller.businessId, async (tx, state) => {
    const business = present(state.business);
    const group = business.scimGroups.find((candidate) => candidate.id === id);
    if (!group) throw notFound("Group", id);
    const currentMembers = await memberStore(deps.db).inGroup(tx, business.id, id);
    assertVersion(groupResource(group, currentMembers, scimBaseUrl(deps)), ifMatch);
    const moved = await movedMembers(deps, tx, business.id, id, currentMembers, []);
    await commitGroup(tx, deps, caller, business, state.subscription, null, id, moved, "scim.group.delete", now);
  });
}
