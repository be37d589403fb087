import { Timestamp, type Transaction } from "firebase-admin/firestore";
import { outboundEvent } from "../core/event-types";
import type { z } from "zod";
import { drawsOnSubscription, effectiveSubscriptionStatus, heldSeats, ssoBlocks, subscriptionGrants, type BusinessRole } from "../access/rules";
import { businessStore } from "../accounts/business-store";
import { memberOf, seatHolders, type BusinessRecord, type MemberRecord } from "../accounts/business-records";
import { findUser } from "../accounts/identity";
import { subscriptionStore, type SubscriptionRecord } from "../accounts/subscription-store";
import { instanceQueue } from "../core/concurrency";
import { auditLog, operatorOf, type Actor } from "../core/audit-log";
import type { Caller } from "../core/auth";
import { withinDeadline } from "../core/deadline";
import { toIso } from "../core/documents";
import { ApiError } from "../core/errors";
import { randomBase62 } from "../core/secret-tokens";
import { parseInput } from "../core/validation";
import type { Deps, OperatorDeps } from "../deps";
import { subscriptionView } from "../subscriptions/service";
import { businessInput, createBusinessInput, memberInput, removeMemberInput, type memberChangeSchema, type memberListQuerySchema } from "./schemas";

/**
 * Businesses that run themselves (§17): owners and admins manage members, roles and seats; every
 * decision is taken in a transaction on the business document, which holds all of it, so seat
 * counts stay exact under any concurrency. Operators (the CLI) use the same rules.
 */

/** How many businesses one user may own. */
export const MAX_OWNED_BUSINESSES = 10;

export const noBusiness = (businessId: string) => new ApiError("business_not_found", `No business '${businessId}' of which you are a member.`);
const notAdmin = (what: string) => new ApiError("not_business_admin", `Only an owner or admin of this business may ${what}.`);
const notOwner = (what: string) => new ApiError("not_business_admin", `Only an owner of this business may ${what}.`);

/** Who asks for a business: the user, and how their ID token signed in (§22's SSO). */
export type MemberCaller = Pick<Caller, "uid" | "signInProvider">;

/**
 * The business as a member sees it; anyone else (a suspended member too) learns nothing, not even
 * that it exists. A business that enforces SSO answers its members only through its provider.
 */
export function requireMember(business: BusinessRecord | null, caller: MemberCaller, businessId: string): BusinessRecord & { callerRole: BusinessRole } {
  if (!business || !business.memberIds.includes(caller.uid)) throw noBusiness(businessId);
  const callerRole = business.roles[caller.uid] ?? "member";
  if (ssoBlocks(business.sso, callerRole, caller.signInProvider)) throw ssoRequired(business);
  return { ...business, callerRole };
}

export const ssoRequired = (business: Pick<BusinessRecord, "name" | "sso">) =>
  new ApiError("sso_required", `${business.name} requires signing in through its single sign-on (${business.sso?.providerId}); sign in that way and retry.`);

export function requireAdmin(business: BusinessRecord | null, caller: MemberCaller, businessId: string, what: string) {
  const member = requireMember(business, caller, businessId);
  if (member.callerRole === "member") throw notAdmin(what);
  return member;
}

export function requireOwner(business: BusinessRecord | null, caller: MemberCaller, businessId: string, what: string) {
  const member = requireMember(business, caller, businessId);
  if (member.callerRole !== "owner") throw notOwner(what);
  return member;
}

/** Seats that may still be given: null when the subscription counts none. */
export function freeSeats(business: BusinessRecord, subscription: SubscriptionRecord | null, pendingSeatInvitations = 0): number | null {
  const paid = subscription?.seats ?? null;
  return paid === null ? null : paid - seatHolders(business).length - pendingSeatInvitations;
}

export function assertSeatAvailable(business: BusinessRecord, subscription: SubscriptionRecord | null, pendingSeatInvitations = 0): void {
  const free = freeSeats(business, subscription, pendingSeatInvitations);
  if (free !== null && free <= 0) {
    const pending = pendingSeatInvitations > 0 ? ` and ${pendingSeatInvitations} pending seat invitation${pendingSeatInvitations === 1 ? "" : "s"}` : "";
    throw new ApiError(
      "no_seat_available",
      `All ${subscription!.seats} paid seats are taken (${seatHolders(business).length} in use${pending}): free one, or buy more seats.`,
    );
  }
}

/** Whether a member draws on the business's subscription now. */
export function isEntitled(business: BusinessRecord, subscription: SubscriptionRecord | null, uid: string, now: Date): boolean {
  return subscriptionGrants(subscription, drawsOnSubscription(uid, seatHolders(business), subscription?.seats ?? null), now);
}

/** A business and its subscription, in one batched read (or inside a transaction). */
export async function readBusiness(deps: Pick<Deps, "db">, tx: Transaction | null, businessId: string) {
  const businesses = businessStore(deps.db);
  const subscriptions = subscriptionStore(deps.db);
  const refs = [businesses.ref(businessId), subscriptions.ref(businessId)] as const;
  const [businessSnapshot, subscriptionSnapshot] = tx ? await tx.getAll(...refs) : await withinDeadline("Firestore", deps.db.getAll(...refs));
  return { business: businesses.read(businessSnapshot), subscription: subscriptions.read(subscriptionSnapshot) };
}

/** The emails of a business's owners, from Firebase Authentication (an owner without one is left out). */
export async function ownerEmailsOf(deps: Pick<Deps, "auth">, business: Pick<BusinessRecord, "roles">): Promise<string[]> {
  const owners = Object.entries(business.roles).flatMap(([uid, role]) => (role === "owner" ? [{ uid }] : []));
  if (owners.length === 0) return [];
  const { users } = await withinDeadline("Auth", deps.auth.getUsers(owners.slice(0, 100)));
  return users.flatMap((user) => (user.email ? [user.email] : []));
}

/** Runs a business's change in a transaction that first reads the business and its subscription. */
export function inBusinessTransaction<T>(
  deps: Pick<Deps, "db">,
  businessId: string,
  change: (tx: Transaction, state: { business: BusinessRecord | null; subscription: SubscriptionRecord | null }) => Promise<T> | T,
): Promise<T> {
  // One instance's changes of one business take turns rather than abort one another (§1: 50
  // concurrent invitations to one business all get their answer); other instances' are
  // serialised by the transaction itself.
  return instanceQueue(deps.db, "businesses")(businessId, () =>
    withinDeadline("Firestore", deps.db.runTransaction(async (tx) => change(tx, await readBusiness(deps, tx, businessId)))),
  );
}

/** POST /businesses: a business the caller owns, with the caller holding its first seat. */
export async function createOwnedBusiness(deps: Deps, uid: string, actor: Actor, name: string) {
  const { db, clock } = deps;
  const businesses = businessStore(db);
  const id = randomBase62(20);
  const now = clock();
  await withinDeadline(
    "Firestore",
    db.runTransaction(async (tx) => {
      if ((await businesses.ownedBy(tx, uid)) >= MAX_OWNED_BUSINESSES) {
        throw new ApiError("business_limit_reached", `You own ${MAX_OWNED_BUSINESSES} businesses, the most one person may; hand one over or leave one first.`);
      }
      businesses.createOwnedIn(tx, id, name, uid, now);
      auditLog(db).record(tx, actor, { action: "business.create", target: id, details: { name, owner: uid } }, now);
    }),
  );
  return { id, name, role: "owner" as const };
}

/** GET /businesses/:id: the business as the calling member sees it. */
export async function getBusiness(deps: Deps, caller: MemberCaller, businessId: string) {
  const { business: stored, subscription } = await readBusiness(deps, null, businessId);
  const business = requireMember(stored, caller, businessId);
  const uid = caller.uid;
  return {
    id: business.id,
    name: business.name,
    role: business.callerRole,
    seat: Boolean(memberOf(business, uid)?.seat),
    billingAccount: business.stripeCustomerId !== null,
    subscription: { ...subscriptionView(businessId, subscription, deps.clock()), seatsUsed: seatHolders(business).length },
  };
}

/** The members in the order of the list: by when they joined, then uid. */
const memberOrder = (a: Pick<MemberRecord, "uid" | "joinedAt">, b: Pick<MemberRecord, "uid" | "joinedAt">) => (a.joinedAt?.getTime() ?? 0) - (b.joinedAt?.getTime() ?? 0) || (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0);

/** Member views, with each member's email and name as Firebase Auth knows them now. */
async function memberViews(deps: Pick<Deps, "auth" | "clock">, business: BusinessRecord, subscription: SubscriptionRecord | null, members: MemberRecord[]) {
  const users = members.length > 0 ? (await withinDeadline("Auth", deps.auth.getUsers(members.map(({ uid }) => ({ uid }))))).users : [];
  const byUid = new Map(users.map((user) => [user.uid, user]));
  const now = deps.clock();
  return members.map((member) => ({
    uid: member.uid,
    email: byUid.get(member.uid)?.email ?? null,
    displayName: byUid.get(member.uid)?.displayName ?? null,
    role: member.role,
    seat: member.seat,
    entitled: isEntitled(business, subscription, member.uid, now),
    joinedAt: member.joinedAt ? toIso(member.joinedAt) : null,
    seatAssignedAt: member.seatAssignedAt ? toIso(member.seatAssignedAt) : null,
    source: member.source,
    suspended: member.suspended,
    scimManaged: member.scim !== null,
  }));
}

/** GET /businesses/:id/members: a page of members, for owners and admins. */
export async function listMembers(deps: Deps, caller: MemberCaller, businessId: string, query: z.output<typeof memberListQuerySchema>) {
  const { business: stored, subscription } = await readBusiness(deps, null, businessId);
  const business = requireAdmin(stored, caller, businessId, "list its members");
  const ordered = [...business.members].sort(memberOrder);
  let start = 0;
  if (query.cursor) {
    const after = deps.cursors.decode(query.cursor);
    const afterMember = { uid: after.id, joinedAt: after.at.toMillis() === 0 ? null : after.at.toDate() };
    start = ordered.findIndex((member) => memberOrder(member, afterMember) > 0);
    if (start === -1) start = ordered.length;
  }
  const page = ordered.slice(start, start + query.limit);
  const last = page.at(-1);
  const more = start + query.limit < ordered.length;
  return {
    items: await memberViews(deps, business, subscription, page),
    nextCursor: more && last ? deps.cursors.encode({ at: last.joinedAt ? Timestamp.fromDate(last.joinedAt) : new Timestamp(0, 0), id: last.uid }) : null,
  };
}

/** The rules of a role change: only owners touch owners, and the last owner stays one. */
function assertRoleChange(business: BusinessRecord & { callerRole: BusinessRole }, target: MemberRecord, role: BusinessRole): void {
  if (role === target.role) return;
  if ((role === "owner" || target.role === "owner") && business.callerRole !== "owner") throw notOwner("make or unmake owners");
  if (target.role === "owner" && ownerCount(business) === 1) throw lastOwner();
}

const ownerCount = (business: BusinessRecord) => business.members.filter((member) => member.role === "owner").length;
const lastOwner = () => new ApiError("last_owner", "A business keeps at least one owner: make someone else an owner first.");
const noMembership = (uid: string) => new ApiError("membership_not_found", `No member '${uid}' in this business.`);

/** PATCH /businesses/:id/members/:uid: a new role, a seat given or taken. */
export async function changeMember(deps: Deps, caller: MemberCaller, actor: Actor, businessId: string, uid: string, change: z.output<typeof memberChangeSchema>) {
  const { db, clock } = deps;
  const businesses = businessStore(db);
  const now = clock();
  const { business, subscription, member } = await inBusinessTransaction(deps, businessId, (tx, state) => {
    const business = requireAdmin(state.business, caller, businessId, "change its members");
    const target = memberOf(business, uid);
    if (!target) throw noMembership(uid);
    if (target.suspended) throw new ApiError("invalid_request", `Member '${uid}' is suspended by the business's identity provider (SCIM); restore them there.`);
    const role = change.role ?? target.role;
    assertRoleChange(business, target, role);
    const seat = change.seat ?? target.seat;
    if (seat && !target.seat) assertSeatAvailable(business, state.subscription);
    const seatAssignedAt = seat === target.seat ? target.seatAssignedAt : seat ? now : null;
    if (role !== target.role) businesses.setRole(tx, businessId, uid, role);
    if (seat !== target.seat) businesses.setSeat(tx, businessId, target, seatAssignedAt);
    if (role !== target.role || seat !== target.seat) {
      const previousRole = role !== target.role ? { previousRole: target.role } : {};
      auditLog(db).record(
        tx,
        actor,
        {
          action: "business.member.change",
          target: businessId,
          details: { uid, role, seat, ...previousRole },
          emits: [outboundEvent("business.member.updated", [{ kind: "business", id: businessId }], { businessId, uid, role, seat, ...previousRole, path: `/businesses/${businessId}/members/${uid}` })],
        },
        now,
      );
    }
    const updated: MemberRecord = { ...target, role, seat, seatAssignedAt };
    const members = business.members.map((member) => (member.uid === uid ? updated : member));
    return { business: { ...business, members, roles: { ...business.roles, [uid]: role } }, subscription: state.subscription, member: updated };
  });
  return (await memberViews(deps, business, subscription, [member]))[0];
}

/** DELETE /businesses/:id/members/:uid: an owner or admin removes someone, or a member leaves. */
export async function removeMemberOf(deps: Deps, caller: MemberCaller, actor: Actor, businessId: string, uid: string): Promise<void> {
  const { db, clock } = deps;
  const now = clock();
  await inBusinessTransaction(deps, businessId, (tx, state) => {
    const leaving = caller.uid === uid;
    const business = leaving ? requireMember(state.business, caller, businessId) : requireAdmin(state.business, caller, businessId, "remove members");
    const target = memberOf(business, uid);
    if (!target) throw noMembership(uid);
    if (target.role === "owner") {
      if (!leaving && business.callerRole !== "owner") throw notOwner("remove an owner");
      if (ownerCount(business) === 1) throw lastOwner();
    }
    businessStore(db).removeMember(tx, businessId, uid);
    auditLog(db).record(
      tx,
      actor,
      {
        action: leaving ? "business.member.leave" : "business.member.remove",
        target: businessId,
        details: { uid, role: target.role, seat: target.seat },
        emits: [outboundEvent("business.member.left", [{ kind: "business", id: businessId }], { businessId, uid, role: target.role, seat: target.seat, path: `/businesses/${businessId}/members` })],
      },
      now,
    );
  });
}

// Operators (the CLI, the seed): the same documents and rules, by business id and user reference.

export async function createBusiness(deps: OperatorDeps, input: z.input<typeof createBusinessInput>) {
  const { db, clock } = deps;
  const { id, name } = parseInput(createBusinessInput, input);
  const businesses = businessStore(db);
  await withinDeadline(
    "Firestore",
    db.runTransaction(async (tx) => {
      if ((await tx.get(businesses.ref(id))).exists) throw new ApiError("business_exists", `Business '${id}' exists.`);
      businesses.createIn(tx, id, name);
      auditLog(db).record(tx, operatorOf(deps), { action: "business.create", target: id, details: { name } }, clock());
    }),
  );
  return { id, name, members: 0 };
}

export async function addMember(deps: OperatorDeps, input: z.input<typeof memberInput>) {
  const { db, auth, clock } = deps;
  const { id, user: reference, role, seat } = parseInput(memberInput, input);
  const user = await findUser(auth, reference);
  const now = clock();
  const held = await inBusinessTransaction(deps, id, (tx, { business, subscription }) => {
    if (!business) throw new ApiError("business_not_found", `No business '${id}'.`);
    const existing = memberOf(business, user.uid);
    if (existing && existing.role === role && existing.seat === seat) return { seat, changed: false };
    if (existing && existing.role === "owner" && role !== "owner" && ownerCount(business) === 1) throw lastOwner();
    if (seat && !existing?.seat) assertSeatAvailable(business, subscription);
    const seatAt = seat ? (existing?.seat ? (existing.seatAssignedAt ?? now) : now) : null;
    // An operator's add restores a suspended member too, keeping what SCIM knows of them.
    if (existing) businessStore(db).putMember(tx, id, { ...existing, role, seat, seatAssignedAt: seatAt, suspended: false });
    else businessStore(db).addMember(tx, id, user.uid, role, now, seatAt);
    const event = existing
      ? outboundEvent("business.member.updated", [{ kind: "business", id }], { businessId: id, uid: user.uid, role, seat, path: `/businesses/${id}/members/${user.uid}` })
      : outboundEvent("business.member.joined", [{ kind: "business", id }], { businessId: id, uid: user.uid, role, seat, path: `/businesses/${id}/members/${user.uid}` });
    auditLog(db).record(tx, operatorOf(deps), { action: "business.member.add", target: id, details: { uid: user.uid, role, seat }, emits: [event] }, now);
    return { seat, changed: true };
  });
  return { businessId: id, uid: user.uid, email: user.email, role, seat: held.seat };
}

export async function removeMember(deps: OperatorDeps, input: z.input<typeof removeMemberInput>) {
  const { db, auth, clock } = deps;
  const { id, user: reference } = parseInput(removeMemberInput, input);
  const user = await findUser(auth, reference);
  await inBusinessTransaction(deps, id, (tx, { business }) => {
    if (!business) throw new ApiError("business_not_found", `No business '${id}'.`);
    const target = memberOf(business, user.uid);
    if (!target) throw new ApiError("membership_not_found", `${user.email ?? user.uid} is not a member of '${id}'.`);
    if (target.role === "owner" && ownerCount(business) === 1) throw lastOwner();
    businessStore(db).removeMember(tx, id, user.uid);
    const left = outboundEvent("business.member.left", [{ kind: "business", id }], { businessId: id, uid: user.uid, role: target.role, seat: target.seat, path: `/businesses/${id}/members` });
    auditLog(db).record(tx, operatorOf(deps), { action: "business.member.remove", target: id, details: { uid: user.uid }, emits: [left] }, clock());
  });
  return { businessId: id, uid: user.uid, email: user.email, removed: true };
}

/** Operators: a business with its members, their roles and seats, and its subscription's seat use. */
export async function describeBusiness(deps: OperatorDeps, input: z.input<typeof businessInput>) {
  const { id } = parseInput(businessInput, input);
  const { business, subscription } = await readBusiness(deps, null, id);
  if (!business) throw new ApiError("business_not_found", `No business '${id}'.`);
  const now = deps.clock();
  const held = heldSeats(seatHolders(business), subscription?.seats ?? null);
  return {
    id,
    name: business.name,
    plan: subscription?.plan ?? null,
    status: subscription ? effectiveSubscriptionStatus(subscription, now) : "none",
    seatsPaid: subscription?.seats ?? null,
    seatsUsed: seatHolders(business).length,
    seatsHeld: held.size,
    stripeCustomerId: business.stripeCustomerId,
    pendingInvitations: business.invitations.filter((invitation) => invitation.expiresAt > now).length,
    // One row per member, so the CLI's table shows them.
    members: [...business.members].sort(memberOrder).map((member) => ({
      uid: member.uid,
      role: member.role,
      seat: member.seat,
      entitled: isEntitled(business, subscription, member.uid, now),
      seatAssignedAt: member.seatAssignedAt ? toIso(member.seatAssignedAt) : null,
      source: member.source,
      suspended: member.suspended,
    })),
    verifiedDomains: business.domains.filter((domain) => domain.verifiedAt !== null).map((domain) => domain.domain),
    sso: business.sso,
  };
}
