import type { UserRecord } from "firebase-admin/auth";
import { businessStore } from "../accounts/business-store";
import { memberOf, type BusinessRecord, type MemberRecord, type ScimProfile } from "../accounts/business-records";
import type { SubscriptionRecord } from "../accounts/subscription-store";
import { inBusinessTransaction, readBusiness } from "../businesses/service";
import { auditLog } from "../core/audit-log";
import { withinDeadline } from "../core/deadline";
import { outboundEvent } from "../core/event-types";
import type { Deps } from "../deps";
import { emailInDomains, verifiedDomainsOf } from "../domains/service";
import { invalidValue, listResponse, mutability, notFound, resourceFilter, scimMembers, uniqueness, userResource, type ScimResource } from "./resources";
import { groupNamesOf, managesAccount, managedUserId, seatForNewcomer } from "./rules";
import { scimUserInput, type ScimUserInput } from "./schemas";
import { scimBaseUrl, type ScimCaller } from "./tokens";
import { answer, assertVersion, memberEvents, present, settle, withMembers, type Projected, type Query } from "./directory";
import { applyPatch, parseScim, patchOperations } from "./patch";

/** SCIM Users of a business (§22): each change one transaction on the business document (directory.ts). */

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
