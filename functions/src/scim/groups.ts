import type { Transaction } from "firebase-admin/firestore";
import type { ScimPatchOperation } from "scim-patch";
import { businessStore } from "../accounts/business-store";
import type { BusinessRecord, MemberRecord, ScimGroupRecord } from "../accounts/business-records";
import { memberStore } from "../accounts/member-store";
import type { SubscriptionRecord } from "../accounts/subscription-store";
import { inBusinessTransaction, readBusiness } from "../businesses/membership";
import { auditLog } from "../core/audit-log";
import { documentIdProblem } from "../core/documents";
import { randomBase62 } from "../core/secret-tokens";
import type { Deps } from "../deps";
import type { MemberChange } from "../seats/ledger";
import { memberEvents } from "../seats/member-events";
import { answer, assertVersion, MAX_GROUPS, namesVersion, MAX_MEMBERS_MOVED, present, settle, type Projected, type Query } from "./directory";
import { splitGroupPatch } from "./group-patch";
import { directoryJobStore } from "./directory-job-store";
import { groupStateStore, type GroupState } from "./group-state-store";
import { applyPatch, parseScim, patchOperations } from "./patch";
import { groupResource, invalidValue, isScimMember, listPage, notFound, orderedPage, resourceFilter, ScimError, uniqueness, type ScimResource } from "./resources";
import { scimGroupInput, type ScimGroupInput } from "./schemas";
import { scimBaseUrl, type ScimCaller } from "./tokens";

/**
 * SCIM Groups of a business (§22, §25): a group's name and ids live in the business's document,
 * its revision in its own state document (group-state-store.ts), its membership on its members'
 * documents. A change reads and writes the members it moves and the group's state, whatever the
 * group's size; only a create, a rename or a delete writes the business's document. A delete
 * takes the group off its members in the background (directory-jobs.ts).
 */

/** The most members a Group's answer lists (§25); a larger group is read with excludedAttributes=members, its members paged through /Users. */
export const MAX_LISTED_MEMBERS = 10_000;

/** A group's resource before any change: the version a PATCH's operations see is not theirs to change. */
const NO_REVISION: GroupState = { revision: 0, lastModified: null };

/**
 * An If-Match checked against the group's version. The revision is read (every shard, held in the
 * transaction) only when the If-Match names a version: a change otherwise adds to it blindly.
 */
async function assertGroupVersion(deps: Deps, tx: Transaction, businessId: string, group: ScimGroupRecord, ifMatch: string | undefined): Promise<void> {
  if (namesVersion(ifMatch)) assertVersion(groupResource(group, await groupStateStore(deps.db).getIn(tx, businessId, group.id), null, scimBaseUrl(deps)), ifMatch);
}

/** Members are named in `attributes` or not excluded: the answer lists them. */
const wantsMembers = (query: Query) => {
  const names = (value: string | string[] | undefined) => String(value ?? "").split(",").map((name) => name.trim().replace(/^urn:ietf:params:scim:schemas:core:2\.0:group:/i, "").split(".")[0].toLowerCase());
  if (names(query.excludedAttributes).includes("members")) return false;
  return query.attributes === undefined || names(query.attributes).includes("members");
};

/** A group's members for its answer: at most MAX_LISTED_MEMBERS, else 400 tooMany. */
async function listedMembers(deps: Deps, businessId: string, groupId: string): Promise<MemberRecord[]> {
  const members = await memberStore(deps.db).inGroup(businessId, groupId, MAX_LISTED_MEMBERS + 1);
  if (members.length > MAX_LISTED_MEMBERS) {
    throw new ScimError(400, "tooMany", `Group '${groupId}' has more than ${MAX_LISTED_MEMBERS.toLocaleString("en")} members: ask with excludedAttributes=members, and page through its members with GET /Users?filter=groups.value eq "${groupId}".`);
  }
  return members;
}

function groupOf(business: BusinessRecord, input: Pick<ScimGroupInput, "displayName" | "externalId">, existing: ScimGroupRecord | null, now: Date): ScimGroupRecord {
  const others = business.scimGroups.filter((group) => group.id !== existing?.id);
  if (others.some((group) => group.displayName.toLowerCase() === input.displayName.toLowerCase())) throw uniqueness(`A Group named '${input.displayName}' exists.`);
  if (input.externalId && others.some((group) => group.externalId === input.externalId)) throw uniqueness(`A Group with externalId '${input.externalId}' exists.`);
  if (!existing && others.length >= MAX_GROUPS) throw invalidValue(`This business has ${MAX_GROUPS} Groups, the most it may; delete one first.`);
  const unchanged = existing !== null && existing.displayName === input.displayName && existing.externalId === (input.externalId ?? null);
  if (unchanged) return existing;
  return { id: existing?.id ?? randomBase62(20), displayName: input.displayName, externalId: input.externalId ?? null, created: existing?.created ?? now, lastModified: now };
}

const memberIdsOf = (input: ScimGroupInput) => [...new Set((input.members ?? []).map((member) => member.value))];

/** Members to add to a group and to take out of it, by uid. */
interface Moves {
  add: string[];
  remove: string[];
}

/** The moves that make the group's members `wanted`: a whole replacement, compared with the group's members read outside the change. */
async function movesTo(deps: Deps, businessId: string, groupId: string | null, wanted: string[]): Promise<Moves> {
  const current = new Set(groupId ? await memberStore(deps.db).uidsInGroup(businessId, groupId) : []);
  const wantedSet = new Set(wanted);
  return { add: wanted.filter((uid) => !current.has(uid)), remove: [...current].filter((uid) => !wantedSet.has(uid)) };
}

/**
 * The members the moves change, read in the transaction: each one added must be a User of this
 * business; one already in the group, or one to take out that is not in it, changes nothing.
 * One request moves at most MAX_MEMBERS_MOVED.
 */
async function movedMembers(deps: Deps, tx: Transaction, businessId: string, groupId: string, moves: Moves): Promise<MemberChange[]> {
  if (moves.add.length + moves.remove.length > MAX_MEMBERS_MOVED) {
    throw invalidValue(`This change moves ${moves.add.length + moves.remove.length} members into or out of the Group; send at most ${MAX_MEMBERS_MOVED} per request.`);
  }
  const invalid = moves.add.find((uid) => documentIdProblem(uid) !== null);
  if (invalid !== undefined) throw invalidValue(`Group member '${invalid}' is not a User of this business; provision the User first.`);
  const removable = moves.remove.filter((uid) => documentIdProblem(uid) === null);
  const found = await memberStore(deps.db).getMany(tx, businessId, [...moves.add, ...removable]);
  const added = found.slice(0, moves.add.length);
  const unknown = added.findIndex((member) => !isScimMember(member));
  if (unknown !== -1) throw invalidValue(`Group member '${moves.add[unknown]}' is not a User of this business; provision the User first.`);
  return [
    ...added.filter((member) => !member!.groups.includes(groupId)).map((member) => ({ before: member!, after: { ...member!, groups: [...member!.groups, groupId] } })),
    ...found
      .slice(moves.add.length)
      .filter((member): member is MemberRecord => member !== null && member.groups.includes(groupId))
      .map((member) => ({ before: member, after: { ...member, groups: member.groups.filter((id) => id !== groupId) } })),
  ];
}

export async function listGroups(deps: Deps, caller: ScimCaller, query: Query & { filter?: string; startIndex?: number; count?: number }) {
  const { matches } = resourceFilter(query.filter);
  const { business: stored } = await readBusiness(deps, null, caller.businessId);
  const business = present(stored);
  const base = scimBaseUrl(deps);
  const states = await groupStateStore(deps.db).getAll(business.id, business.scimGroups.map((group) => group.id));
  const members = (group: ScimGroupRecord) => listedMembers(deps, business.id, group.id);
  // A filter on members reads every group's; otherwise only the page's groups are read, and only when listed.
  if (/members/i.test(query.filter ?? "")) {
    const resources = await Promise.all(business.scimGroups.map(async (group, index) => groupResource(group, states[index], await members(group), base)));
    const { page, totalResults, startIndex } = orderedPage(resources.filter(matches), query);
    return listPage(page, totalResults, startIndex, query);
  }
  const resources = business.scimGroups.map((group, index) => groupResource(group, states[index], null, base));
  const { page, totalResults, startIndex } = orderedPage(resources.filter(matches), query);
  if (!wantsMembers(query)) return listPage(page, totalResults, startIndex, query);
  const byId = new Map(business.scimGroups.map((group, index) => [group.id, { group, state: states[index] }]));
  const withMembers = async (resource: ScimResource) => {
    const { group, state } = byId.get(resource.id)!;
    return groupResource(group, state, await members(group), base);
  };
  return listPage(await Promise.all(page.map(withMembers)), totalResults, startIndex, query);
}

export async function getGroup(deps: Deps, caller: ScimCaller, id: string, query: Query): Promise<Projected> {
  const { business: stored } = await readBusiness(deps, null, caller.businessId);
  const business = present(stored);
  const group = business.scimGroups.find((candidate) => candidate.id === id);
  if (!group) throw notFound("Group", id);
  const state = await groupStateStore(deps.db).get(business.id, id);
  return answer(groupResource(group, state, wantsMembers(query) ? await listedMembers(deps, business.id, id) : null, scimBaseUrl(deps)), query);
}

/** A group's change and the roles and seats it moves, in one transaction (`settle` reads what it needs before the writes). */
async function commitGroup(
  tx: Transaction,
  deps: Deps,
  caller: ScimCaller,
  business: BusinessRecord,
  subscription: SubscriptionRecord | null,
  change: { group: ScimGroupRecord; definitionChanged: boolean; moved: MemberChange[]; action: string },
  now: Date,
): Promise<MemberChange[]> {
  const { group } = change;
  const after = change.definitionChanged ? { ...business, scimGroups: [...business.scimGroups.filter((candidate) => candidate.id !== group.id), group] } : business;
  const changes = await settle(tx, deps, after, subscription, change.moved, now);
  if (change.definitionChanged) businessStore(deps.db).putScimGroup(tx, business.id, group);
  groupStateStore(deps.db).changedIn(tx, business.id, group.id, now);
  const moved = { added: change.moved.filter((entry) => entry.after.groups.includes(group.id)).length, removed: change.moved.filter((entry) => !entry.after.groups.includes(group.id)).length };
  auditLog(deps.db).record(tx, caller.actor, { action: change.action, target: business.id, details: { groupId: group.id, displayName: group.displayName, ...moved }, emits: memberEvents(business.id, changes) }, now);
  return changes;
}

export async function createGroup(deps: Deps, caller: ScimCaller, body: unknown, query: Query): Promise<Projected> {
  const input = parseScim(scimGroupInput, body);
  const now = deps.clock();
  const moves = await movesTo(deps, caller.businessId, null, memberIdsOf(input));
  const { group, state, members } = await inBusinessTransaction(deps, caller.businessId, async (tx, current) => {
    const business = present(current.business);
    const group = groupOf(business, input, null, now);
    const moved = await movedMembers(deps, tx, business.id, group.id, moves);
    const changes = await commitGroup(tx, deps, caller, business, current.subscription, { group, definitionChanged: true, moved, action: "scim.group.create" }, now);
    // A new group's first revision.
    return { group, state: { revision: 1, lastModified: now }, members: changes.map((entry) => entry.after).filter((member) => member.groups.includes(group.id)) };
  });
  return answer(groupResource(group, state, members, scimBaseUrl(deps)), query);
}

/**
 * A change of one group: its name and ids from `definition` (given the group as it stands), its
 * members by `moves`. Changes of one group queue on this instance; of different groups, run side by side.
 */
async function changeGroup(deps: Deps, caller: ScimCaller, id: string, ifMatch: string | undefined, definition: (current: ScimGroupRecord) => Pick<ScimGroupInput, "displayName" | "externalId">, moves: Moves) {
  const now = deps.clock();
  const group = await inBusinessTransaction(
    deps,
    caller.businessId,
    async (tx, current) => {
      const business = present(current.business);
      const existing = business.scimGroups.find((candidate) => candidate.id === id);
      if (!existing) throw notFound("Group", id);
      await assertGroupVersion(deps, tx, business.id, existing, ifMatch);
      const group = groupOf(business, definition(existing), existing, now);
      const moved = await movedMembers(deps, tx, business.id, id, moves);
      if (moved.length === 0 && group === existing) return group;
      await commitGroup(tx, deps, caller, business, current.subscription, { group, definitionChanged: group !== existing, moved, action: "scim.group.update" }, now);
      return group;
    },
    { queueKey: `${caller.businessId}/groups/${id}` },
  );
  // The version the answer carries: read after the change (another may have followed it at once).
  const state = await groupStateStore(deps.db).get(caller.businessId, id);
  return { group, state };
}

/** PUT: the group whole. Its members are compared with the group's (read outside the change, as a whole replacement must); the answer lists them. */
export async function replaceGroup(deps: Deps, caller: ScimCaller, id: string, ifMatch: string | undefined, body: unknown, query: Query): Promise<Projected> {
  const input = parseScim(scimGroupInput, body);
  const moves = await movesTo(deps, caller.businessId, id, memberIdsOf(input));
  const { group, state } = await changeGroup(deps, caller, id, ifMatch, () => input, moves);
  return answer(groupResource(group, state, wantsMembers(query) ? await listedMembers(deps, caller.businessId, id) : null, scimBaseUrl(deps)), query);
}

/**
 * PATCH: members added and removed by name read only those members; a replacement of the members
 * compares with the group's. Answered 204 (RFC 7644 §3.5.2), so that the answer reads no member
 * either; with `attributes` or `excludedAttributes` asked, 200 and the group so projected.
 */
export async function patchGroup(deps: Deps, caller: ScimCaller, id: string, ifMatch: string | undefined, body: unknown, query: Query): Promise<Projected | { version: string }> {
  const { members, attributes } = splitGroupPatch(patchOperations(body));
  const moves = members === null ? { add: [], remove: [] } : members.reset ? await movesTo(deps, caller.businessId, id, members.add) : { add: members.add, remove: members.remove };
  const base = scimBaseUrl(deps);
  const definition = (current: ScimGroupRecord) => (attributes.length === 0 ? current : patchedDefinition(groupResource(current, NO_REVISION, null, base), attributes));
  const { group, state } = await changeGroup(deps, caller, id, ifMatch, definition, moves);
  const resource = groupResource(group, state, null, base);
  if (query.attributes === undefined && query.excludedAttributes === undefined) return { version: String(resource.meta.version) };
  return answer(groupResource(group, state, wantsMembers(query) ? await listedMembers(deps, caller.businessId, id) : null, base), query);
}

/** The name and ids a PATCH leaves the group with (its member operations are taken apart before). */
const patchedDefinition = (resource: ReturnType<typeof groupResource>, operations: ScimPatchOperation[]) => parseScim(scimGroupInput, applyPatch(resource, operations));

/** DELETE: the group goes at once; its members leave it in the background, a batch at a time, with the roles and seats it gave (directory-jobs.ts). */
export async function deleteGroup(deps: Deps, caller: ScimCaller, id: string, ifMatch: string | undefined): Promise<void> {
  const now = deps.clock();
  await inBusinessTransaction(deps, caller.businessId, async (tx, current) => {
    const business = present(current.business);
    const group = business.scimGroups.find((candidate) => candidate.id === id);
    if (!group) throw notFound("Group", id);
    await assertGroupVersion(deps, tx, business.id, group, ifMatch);
    businessStore(deps.db).deleteScimGroup(tx, business.id, id);
    groupStateStore(deps.db).deleteIn(tx, business.id, id);
    directoryJobStore(deps.db).addIn(tx, { businessId: business.id, kind: "group-removal", groupId: id }, now);
    auditLog(deps.db).record(tx, caller.actor, { action: "scim.group.delete", target: business.id, details: { groupId: id, displayName: group.displayName } }, now);
  });
}
