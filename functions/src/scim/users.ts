import type { UserRecord } from "firebase-admin/auth";
import type { Transaction } from "firebase-admin/firestore";
import type { BusinessRecord, MemberRecord, ScimProfile } from "../accounts/business-records";
import { memberStore, type MemberPosition } from "../accounts/member-store";
import { inBusinessTransaction, memberQueueKey, readBusiness } from "../businesses/membership";
import { auditLog } from "../core/audit-log";
import { withinDeadline } from "../core/deadline";
import { documentIdProblem } from "../core/documents";
import { outboundEvent } from "../core/event-types";
import type { Deps } from "../deps";
import { emailInDomains, verifiedDomainsOf } from "../domains/service";
import { applyManagedAccountState } from "../accounts/identity";
import { invalidValue, isScimMember, listPage, listResponse, listWindow, mutability, notFound, resourceFilter, uniqueness, userResource, type ScimMember, type ScimResource } from "./resources";
import { scimListCursorStore } from "./list-cursor-store";
import { passSeatOn, unseated } from "../seats/ledger";
import { groupNamesOf, managesAccount, managedUserId, wantsSeat } from "./rules";
import { scimUserInput, type ScimUserInput } from "./schemas";
import { scimBaseUrl, type ScimCaller } from "./tokens";
import { answer, assertVersion, present, settle, type Projected, type Query } from "./directory";
import { memberEvents } from "../seats/member-events";
import { applyPatch, parseScim, patchOperations } from "./patch";

/** SCIM Users of a business (§22, §25): each change one transaction on the User's member document (directory.ts). */

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

/** Refuses a userName or externalId another User holds (read in the change's transaction: one winner under any concurrency). */
async function assertUnique(deps: Pick<Deps, "db">, tx: Transaction | null, businessId: string, uid: string, input: ScimUserInput): Promise<void> {
  const members = memberStore(deps.db);
  const [byName, byExternalId] = await Promise.all([members.scimKeyHolder(tx, businessId, "userName", input.userName), input.externalId ? members.scimKeyHolder(tx, businessId, "externalId", input.externalId) : null]);
  if (byName !== null && byName !== uid) throw uniqueness(`A User with userName '${input.userName}' exists (id ${byName}).`);
  if (byExternalId !== null && byExternalId !== uid) throw uniqueness(`A User with externalId '${input.externalId}' exists (id ${byExternalId}).`);
}

/**
 * SCIM makes or links members only inside the business's verified domains (§22), whether or not
 * an account with the email exists: a business restricts its members (§26), so nobody outside its
 * domains becomes one without accepting an invitation (§17).
 */
function assertInDomains(business: BusinessRecord, email: string): void {
  const domains = verifiedDomainsOf(business);
  if (emailInDomains(email, domains)) return;
  const held = domains.length > 0 ? ` (${domains.join(", ")})` : "";
  throw invalidValue(`userName ${email} is not in a verified domain of this business${held}: verify the domain first (POST /businesses/${business.id}/domains).`);
}

/**
 * The member after `active` is set: suspension frees the seat (for whoever waits longest) and
 * stops any wait; a restored member waits for a seat when they are to hold one (settle gives it
 * while one is free).
 */
function withActive(business: BusinessRecord, member: MemberRecord, active: boolean, now: Date): MemberRecord {
  if (active === !member.suspended) return member;
  if (member.role === "owner" && !active) throw mutability("Owners are managed in the product, not by SCIM: make them an admin or member there first.");
  if (!active) return { ...unseated(member), suspended: true };
  return { ...member, suspended: false, waitingSince: wantsSeat(business.scimSettings, [...groupNamesOf(business.scimGroups, member)]) ? now : null };
}

/**
 * Finds the Firebase Auth user of an email, or makes a managed one (email verified, no password,
 * the uid that says this business made it); the email is in a domain the business has verified
 * (assertInDomains, before).
 */
async function authUserFor(deps: Deps, business: BusinessRecord, input: ScimUserInput): Promise<UserRecord> {
  const { auth } = deps;
  const byEmail = () => withinDeadline("Auth", auth.getUserByEmail(input.userName));
  try {
    return await byEmail();
  } catch (error) {
    if ((error as { code?: string }).code !== "auth/user-not-found") throw error;
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

/** Members read at a time when a filter no index answers is evaluated over the directory. */
const SCAN_PAGE = 500;

/**
 * GET /Users: without a filter, or with one an index answers (`userName`, `externalId` or `id`
 * `eq`, what Okta and Entra send), a page read from its cursor (`startIndex` continuing the last
 * page) and `totalResults` from the kept count (or a count of an equality's matches); any other filter is evaluated over the directory, a page
 * of members at a time (its cost grows with the business, as no index answers it).
 */
export async function listUsers(deps: Deps, caller: ScimCaller, query: Query & { filter?: string; startIndex?: number; count?: number }) {
  const { matches, indexed } = resourceFilter(query.filter);
  const { businessId } = caller;
  const { business: stored } = await readBusiness(deps, null, businessId);
  const business = present(stored);
  const base = scimBaseUrl(deps);
  const members = memberStore(deps.db);
  const { startIndex, count } = listWindow(query);
  const resourceOf = (member: MemberRecord) => userResource(member as ScimMember, business, base);
  const filtered = (query.filter ?? "").trim() !== "";
  if (filtered && !indexed) {
    const found: ScimResource[] = [];
    for (let after: MemberPosition | null = null; ; ) {
      let page = members.scimUsers(businessId, null);
      if (after) page = page.startAfter(after.at, after.uid);
      const read = await members.readPage(page.limit(SCAN_PAGE));
      found.push(...read.map(resourceOf).filter(matches));
      if (read.length < SCAN_PAGE) break;
      after = members.scimPositionOf(read.at(-1)!);
    }
    return listResponse(found, query);
  }
  // An id no document can have matches no User.
  if (indexed?.attribute === "id" && documentIdProblem(indexed.value) !== null) return listPage([], 0, startIndex, query);
  // A group that is not (or no longer: its members leave it in the background) has no members.
  if (indexed?.attribute === "groups.value" && !business.scimGroups.some((group) => group.id === indexed.value)) return listPage([], 0, startIndex, query);
  const where = indexed ? { field: INDEXED_FIELDS[indexed.attribute], value: indexed.value } : null;
  const list = where ? `${where.field}=${where.value}` : "all";
  const cursors = scimListCursorStore(deps.db);
  const now = deps.clock();
  const ordered = members.scimUsers(businessId, where);
  const cursor = startIndex > 1 && count > 0 ? await cursors.get(businessId, list, startIndex, now) : null;
  const readWindow = async () => {
    if (count === 0) return [];
    const from = cursor ? ordered.startAfter(cursor.position.at, cursor.position.uid) : startIndex > 1 ? ordered.offset(startIndex - 1) : ordered;
    return members.readPage(from.limit(count));
  };
  // totalResults: counted (one read per 1,000 Users) when a walk starts, and carried by its cursor
  // from page to page (Users made or deleted meanwhile show in the next walk's count).
  const counting = () => (where ? ordered.count().get().then((counted) => counted.data().count) : members.scimUserCount(businessId));
  const [total, page] = await Promise.all([cursor?.total ?? counting(), readWindow()]);
  if (page.length === count && count > 0) await cursors.put(businessId, list, startIndex + count, { position: members.scimPositionOf(page.at(-1)!), total }, now);
  return listPage(page.map(resourceOf), total, startIndex, query);
}

const INDEXED_FIELDS = { userName: "scimUserName", externalId: "scimExternalId", id: "id", "groups.value": "groups" } as const;

/** A User's id from a path: one no document can have names no User. */
const userId = (id: string) => {
  if (documentIdProblem(id) !== null) throw notFound("User", id);
  return id;
};

export async function getUser(deps: Deps, caller: ScimCaller, id: string, query: Query): Promise<Projected> {
  const { business: stored, member } = await readBusiness(deps, null, caller.businessId, userId(id));
  const business = present(stored);
  if (!isScimMember(member)) throw notFound("User", id);
  return answer(userResource(member, business, scimBaseUrl(deps)), query);
}

export async function createUser(deps: Deps, caller: ScimCaller, body: unknown, query: Query): Promise<Projected> {
  const input = parseScim(scimUserInput, body);
  const { businessId } = caller;
  const { business: before } = await readBusiness(deps, null, businessId);
  assertInDomains(present(before), input.userName);
  // A duplicate is refused before an account is made for it (and again in the transaction).
  await assertUnique(deps, null, businessId, "", input);
  const user = await authUserFor(deps, present(before), input);
  const now = deps.clock();
  const { business, member } = await inBusinessTransaction(
    deps,
    businessId,
    async (tx, state) => {
      const business = present(state.business);
      assertInDomains(business, input.userName);
      await assertUnique(deps, tx, businessId, user.uid, input);
      const existing = state.member;
      if (existing?.scim) throw uniqueness(`A User with userName '${input.userName}' exists (id ${user.uid}).`);
      const active = input.active ?? true;
      const profile = profileOf(input, now, now);
      let member: MemberRecord;
      if (existing) {
        member = { ...withActive(business, existing, active, now), scim: profile };
      } else {
        const managed = managesAccount(businessId, user.uid, input.userName);
        const waitingSince = active && wantsSeat(business.scimSettings, []) ? now : null;
        member = { uid: user.uid, role: "member", joinedAt: now, seat: false, seatAssignedAt: null, seatShard: null, waitingSince, source: "scim", suspended: !active, managed, scim: profile, groups: [] };
      }
      const changes = await settle(tx, deps, business, state.subscription, [{ before: existing, after: member }], now);
      auditLog(deps.db).record(tx, caller.actor, { action: "scim.user.create", target: businessId, details: { uid: user.uid, userName: input.userName, linked: Boolean(existing), active }, emits: memberEvents(businessId, changes) }, now);
      return { business, member: changes[0].after };
    },
    { uid: user.uid, queueKey: memberQueueKey(businessId, user.uid) },
  );
  await applyManagedAccountState(deps.auth, member);
  return answer(userResource(member as ScimMember, business, scimBaseUrl(deps)), query);
}

/** PUT and PATCH of a User: the next representation from the current one, applied in one transaction. */
async function changeUser(deps: Deps, caller: ScimCaller, id: string, ifMatch: string | undefined, next: (current: ScimResource) => ScimUserInput, query: Query): Promise<Projected> {
  const { businessId } = caller;
  const now = deps.clock();
  const base = scimBaseUrl(deps);
  const { business, member } = await inBusinessTransaction(
    deps,
    businessId,
    async (tx, state) => {
      const business = present(state.business);
      const current = state.member;
      if (!isScimMember(current)) throw notFound("User", id);
      const resource = userResource(current, business, base);
      assertVersion(resource, ifMatch);
      const input = next(resource);
      if (input.userName !== current.scim.userName) throw mutability(`userName is the member's sign-in email (${current.scim.userName}) and cannot change; deprovision this User and provision the new email.`);
      await assertUnique(deps, tx, businessId, id, input);
      const active = input.active ?? !current.suspended;
      const profile = profileOf(input, current.scim.created, now);
      const activated = withActive(business, current, active, now);
      if (activated === current && sameProfile(profile, current.scim)) return { business, member: current as MemberRecord };
      const changes = await settle(tx, deps, business, state.subscription, [{ before: current, after: { ...activated, scim: profile } }], now);
      auditLog(deps.db).record(tx, caller.actor, { action: "scim.user.update", target: businessId, details: { uid: id, active }, emits: memberEvents(businessId, changes) }, now);
      return { business, member: changes[0].after };
    },
    { uid: userId(id), queueKey: memberQueueKey(businessId, id) },
  );
  await applyManagedAccountState(deps.auth, member);
  return answer(userResource(member as ScimMember, business, base), query);
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
  const removed = await inBusinessTransaction(
    deps,
    businessId,
    async (tx, state) => {
      const business = present(state.business);
      const member = state.member;
      if (!isScimMember(member)) throw notFound("User", id);
      assertVersion(userResource(member, business, scimBaseUrl(deps)), ifMatch);
      if (member.role === "owner") throw mutability("Owners are managed in the product, not by SCIM: make them an admin or member there first.");
      // The seat goes to whoever waits longest, in this change.
      const seatedWaiters = await passSeatOn(deps.db, tx, businessId, state.subscription?.seats ?? null, member, now);
      memberStore(deps.db).put(tx, businessId, member, null);
      for (const { before, after } of seatedWaiters) memberStore(deps.db).put(tx, businessId, before, after);
      const left = outboundEvent("business.member.left", [{ kind: "business", id: businessId }], { businessId, uid: id, role: member.role, seat: member.seat, source: member.source, path: `/businesses/${businessId}/members` });
      auditLog(deps.db).record(tx, caller.actor, { action: "scim.user.delete", target: businessId, details: { uid: id, userName: member.scim.userName }, emits: [left, ...memberEvents(businessId, seatedWaiters)] }, now);
      return member;
    },
    { uid: userId(id), queueKey: memberQueueKey(businessId, id) },
  );
  await applyManagedAccountState(deps.auth, removed, true);
}

// Groups
