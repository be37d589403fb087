import type { Transaction } from "firebase-admin/firestore";
import { outboundEvent } from "../core/event-types";
import type { z } from "zod";
import { drawsOnSubscription, effectiveSubscriptionStatus, freeSeatCount, ssoBlocks, subscriptionGrants, type BusinessRole } from "../access/rules";
import { businessStore } from "../accounts/business-store";
import type { BusinessRecord, MemberRecord } from "../accounts/business-records";
import { memberStore } from "../accounts/member-store";
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
 * Businesses that run themselves (§17): owners and admins manage members, roles and seats. Each
 * member is a document of its own (§25); a change to one is a transaction on that member, the
 * business's document (read, so that settings hold) and, when a seat is given under a paid
 * quantity, the seat counts, which makes the limit exact under any concurrency. Operators (the
 * CLI) use the same rules.
 */

/** How many businesses one user may own. */
export const MAX_OWNED_BUSINESSES = 10;

export const noBusiness = (businessId: string) => new ApiError("business_not_found", `No business '${businessId}' of which you are a member.`);
const notAdmin = (what: string) => new ApiError("not_business_admin", `Only an owner or admin of this business may ${what}.`);
const notOwner = (what: string) => new ApiError("not_business_admin", `Only an owner of this business may ${what}.`);

/** Who asks for a business: the user, and how their ID token signed in (§22's SSO). */
export type MemberCaller = Pick<Caller, "uid" | "signInProvider">;

/** A business, its subscription and the asking member, as one read (or one transaction) finds them. */
export interface BusinessState {
  business: BusinessRecord | null;
  subscription: SubscriptionRecord | null;
  /** The member who asks (null: not a member, or nobody asked). */
  member: MemberRecord | null;
}

/** The business as its asking member sees it: the record, their role and their membership. */
export type MemberView = BusinessRecord & { callerRole: BusinessRole; caller: MemberRecord };

/**
 * The business as a member sees it; anyone else (a suspended member too) learns nothing, not even
 * that it exists. A business that enforces SSO answers its members only through its provider.
 */
export function requireMember(state: Pick<BusinessState, "business" | "member">, caller: MemberCaller, businessId: string): MemberView {
  const { business, member } = state;
  if (!business || !member || member.uid !== caller.uid || member.suspended) throw noBusiness(businessId);
  if (ssoBlocks(business.sso, member.role, caller.signInProvider)) throw ssoRequired(business);
  return { ...business, callerRole: member.role, caller: member };
}

export const ssoRequired = (business: Pick<BusinessRecord, "name" | "sso">) =>
  new ApiError("sso_required", `${business.name} requires signing in through its single sign-on (${business.sso?.providerId}); sign in that way and retry.`);

export function requireAdmin(state: Pick<BusinessState, "business" | "member">, caller: MemberCaller, businessId: string, what: string) {
  const member = requireMember(state, caller, businessId);
  if (member.callerRole === "member") throw notAdmin(what);
  return member;
}

export function requireOwner(state: Pick<BusinessState, "business" | "member">, caller: MemberCaller, businessId: string, what: string) {
  const member = requireMember(state, caller, businessId);
  if (member.callerRole !== "owner") throw notOwner(what);
  return member;
}

/**
 * Refuses a seat when the paid ones are taken. Reads the seat counts in the transaction only when
 * the subscription counts seats: members joining a business without a seat limit never contend.
 */
export async function assertSeatAvailable(deps: Pick<Deps, "db">, tx: Transaction, businessId: string, subscription: SubscriptionRecord | null, pendingSeatInvitations = 0): Promise<void> {
  if (subscription?.seats === null || subscription?.seats === undefined) return;
  const seatsUsed = await memberStore(deps.db).seatsUsed(tx, businessId);
  const free = freeSeatCount(seatsUsed, pendingSeatInvitations, subscription.seats);
  if (free !== null && free <= 0) {
    const pending = pendingSeatInvitations > 0 ? ` and ${pendingSeatInvitations} pending seat invitation${pendingSeatInvitations === 1 ? "" : "s"}` : "";
    throw new ApiError("no_seat_available", `All ${subscription.seats} paid seats are taken (${seatsUsed} in use${pending}): free one, or buy more seats.`);
  }
}

/** Whether a member draws on the business's subscription now (a count of seat holders only while the quantity is below the seats in use). */
export async function isEntitled(deps: Pick<Deps, "db">, businessId: string, subscription: SubscriptionRecord | null, seatsUsed: number, member: MemberRecord, now: Date): Promise<boolean> {
  if (member.suspended) return false;
  const paid = subscription?.seats ?? null;
  const standing = await memberStore(deps.db).standing(businessId, member, seatsUsed, [paid]);
  return subscriptionGrants(subscription, drawsOnSubscription(standing, paid), now);
}

/** A business, its subscription and (given a uid) that member, in one batched read (or inside a transaction). */
export async function readBusiness(deps: Pick<Deps, "db">, tx: Transaction | null, businessId: string, uid: string | null = null): Promise<BusinessState> {
  const businesses = businessStore(deps.db);
  const subscriptions = subscriptionStore(deps.db);
  const members = memberStore(deps.db);
  const refs = [businesses.ref(businessId), subscriptions.ref(businessId), ...(uid !== null ? [members.ref(businessId, uid)] : [])];
  const [businessSnapshot, subscriptionSnapshot, memberSnapshot] = tx ? await tx.getAll(...refs) : await withinDeadline("Firestore", deps.db.getAll(...refs));
  return { business: businesses.read(businessSnapshot), subscription: subscriptions.read(subscriptionSnapshot), member: memberSnapshot ? members.read(memberSnapshot) : null };
}

/** The emails of a business's owners, from Firebase Authentication (an owner without one is left out). */
export async function ownerEmailsOf(deps: Pick<Deps, "auth" | "db">, businessId: string): Promise<string[]> {
  const owners = await memberStore(deps.db).owners(null, businessId, 100);
  if (owners.length === 0) return [];
  const { users } = await withinDeadline("Auth", deps.auth.getUsers(owners.map(({ uid }) => ({ uid }))));
  return users.flatMap((user) => (user.email ? [user.email] : []));
}

/**
 * Runs a change in a transaction that first reads the business, its subscription and (given a
 * uid) the asking member. `queueKey` says what the change contends on: changes of the business's
 * own document take turns on this instance by business (§1: 50 concurrent invitations to one
 * business all get their answer); a member's change by member, so that a business's members
 * change in parallel (§25). Other instances' are serialised by the transaction itself.
 */
export function inBusinessTransaction<T>(
  deps: Pick<Deps, "db">,
  businessId: string,
  change: (tx: Transaction, state: BusinessState) => Promise<T> | T,
  options: { uid?: string; queueKey?: string } = {},
): Promise<T> {
  return instanceQueue(deps.db, "businesses")(options.queueKey ?? businessId, () =>
    withinDeadline("Firestore", deps.db.runTransaction(async (tx) => change(tx, await readBusiness(deps, tx, businessId, options.uid ?? null)))),
  );
}

/**
 * The queue key of a change to one member: by member, so that a business's members change in
 * parallel (§25); by business when the change may give a seat under a paid quantity, as every such
 * change reads all the seat counts in its transaction, and on one instance they would only
 * contend (the emulator answers such a crowd only after its deadlines).
 */
export const memberQueueKey = (businessId: string, uid: string, readsSeatCounts = false) => (readsSeatCounts ? businessId : `${businessId}/${uid}`);

/** Whether a subscription counts seats (Stripe's quantity): giving one then reads the seat counts. */
export const countsSeats = (subscription: Pick<SubscriptionRecord, "seats"> | null) => subscription !== null && subscription.seats !== null;

/** POST /businesses: a business the caller owns, with the caller holding its first seat. */
export async function createOwnedBusiness(deps: Deps, uid: string, actor: Actor, name: string) {
  const { db, clock } = deps;
  const id = randomBase62(20);
  const now = clock();
  await withinDeadline(
    "Firestore",
    db.runTransaction(async (tx) => {
      const members = memberStore(db);
      if ((await members.ownedCount(tx, uid)) >= MAX_OWNED_BUSINESSES) {
        throw new ApiError("business_limit_reached", `You own ${MAX_OWNED_BUSINESSES} businesses, the most one person may; hand one over or leave one first.`);
      }
      businessStore(db).createFreshIn(tx, id, name);
      members.put(tx, id, null, { uid, role: "owner", joinedAt: now, seat: true, seatAssignedAt: now, source: "owner", suspended: false, managed: false, scim: null, groups: [] });
      auditLog(db).record(tx, actor, { action: "business.create", target: id, details: { name, owner: uid } }, now);
    }),
  );
  return { id, name, role: "owner" as const };
}

/** GET /businesses/:id: the business as the calling member sees it. */
export async function getBusiness(deps: Deps, caller: MemberCaller, businessId: string) {
  const [state, seatsUsed] = await Promise.all([readBusiness(deps, null, businessId, caller.uid), memberStore(deps.db).seatsUsed(null, businessId)]);
  const business = requireMember(state, caller, businessId);
  return {
    id: business.id,
    name: business.name,
    role: business.callerRole,
    seat: business.caller.seat,
    billingAccount: business.stripeCustomerId !== null,
    subscription: { ...subscriptionView(businessId, state.subscription, deps.clock()), seatsUsed },
  };
}

/** Member views, with each member's email and name as Firebase Auth knows them now. */
async function memberViews(deps: Pick<Deps, "auth" | "clock" | "db">, businessId: string, subscription: SubscriptionRecord | null, members: MemberRecord[]) {
  const [users, seatsUsed] = await Promise.all([
    members.length > 0 ? withinDeadline("Auth", deps.auth.getUsers(members.map(({ uid }) => ({ uid })))).then((found) => found.users) : [],
    memberStore(deps.db).seatsUsed(null, businessId),
  ]);
  const byUid = new Map(users.map((user) => [user.uid, user]));
  const now = deps.clock();
  const entitled = await Promise.all(members.map((member) => isEntitled(deps, businessId, subscription, seatsUsed, member, now)));
  return members.map((member, index) => ({
    uid: member.uid,
    email: byUid.get(member.uid)?.email ?? null,
    displayName: byUid.get(member.uid)?.displayName ?? null,
    role: member.role,
    seat: member.seat,
    entitled: entitled[index],
    joinedAt: member.joinedAt ? toIso(member.joinedAt) : null,
    seatAssignedAt: member.seatAssignedAt ? toIso(member.seatAssignedAt) : null,
    source: member.source,
    suspended: member.suspended,
    scimManaged: member.scim !== null,
  }));
}

/** GET /businesses/:id/members: a page of members by when they joined, then uid, for owners and admins; read by cursor (§25). */
export async function listMembers(deps: Deps, caller: MemberCaller, businessId: string, query: z.output<typeof memberListQuerySchema>) {
  const state = await readBusiness(deps, null, businessId, caller.uid);
  requireAdmin(state, caller, businessId, "list its members");
  const members = memberStore(deps.db);
  const after = query.cursor ? deps.cursors.decode(query.cursor) : null;
  const found = await members.page(businessId, after ? { at: after.at, uid: after.id } : null, query.limit);
  const page = found.slice(0, query.limit);
  const last = page.at(-1);
  return {
    items: await memberViews(deps, businessId, state.subscription, page),
    nextCursor: found.length > query.limit && last ? deps.cursors.encode({ at: members.positionOf(last).at, id: last.uid }) : null,
  };
}

/** The rules of a role change: only owners touch owners, and the last owner stays one. */
async function assertRoleChange(deps: Pick<Deps, "db">, tx: Transaction, business: MemberView, target: MemberRecord, role: BusinessRole): Promise<void> {
  if (role === target.role) return;
  if ((role === "owner" || target.role === "owner") && business.callerRole !== "owner") throw notOwner("make or unmake owners");
  if (target.role === "owner") await assertNotLastOwner(deps, tx, business.id);
}

/**
 * Refuses to take the business's last owner: reads (in the transaction) up to two owners, so that
 * two owners demoting each other at once cannot both succeed.
 */
async function assertNotLastOwner(deps: Pick<Deps, "db">, tx: Transaction, businessId: string): Promise<void> {
  if ((await memberStore(deps.db).owners(tx, businessId, 2)).length < 2) throw lastOwner();
}
const lastOwner = () => new ApiError("last_owner", "A business keeps at least one owner: make someone else an owner first.");
const noMembership = (uid: string) => new ApiError("membership_not_found", `No member '${uid}' in this business.`);

/** PATCH /businesses/:id/members/:uid: a new role, a seat given or taken. */
export async function changeMember(deps: Deps, caller: MemberCaller, actor: Actor, businessId: string, uid: string, change: z.output<typeof memberChangeSchema>) {
  const { db, clock } = deps;
  const members = memberStore(db);
  const now = clock();
  const { subscription, member } = await inBusinessTransaction(
    deps,
    businessId,
    async (tx, state) => {
      const business = requireAdmin(state, caller, businessId, "change its members");
      const target = uid === caller.uid ? business.caller : await members.get(tx, businessId, uid);
      if (!target) throw noMembership(uid);
      if (target.suspended) throw new ApiError("invalid_request", `Member '${uid}' is suspended by the business's identity provider (SCIM); restore them there.`);
      const role = change.role ?? target.role;
      await assertRoleChange(deps, tx, business, target, role);
      const seat = change.seat ?? target.seat;
      if (seat && !target.seat) await assertSeatAvailable(deps, tx, businessId, state.subscription);
      const seatAssignedAt = seat === target.seat ? target.seatAssignedAt : seat ? now : null;
      const updated: MemberRecord = { ...target, role, seat, seatAssignedAt };
      if (role !== target.role || seat !== target.seat) {
        members.put(tx, businessId, target, updated);
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
      return { subscription: state.subscription, member: updated };
    },
    { uid: caller.uid, queueKey: memberQueueKey(businessId, uid, change.seat === true) },
  );
  return (await memberViews(deps, businessId, subscription, [member]))[0];
}

/** DELETE /businesses/:id/members/:uid: an owner or admin removes someone, or a member leaves. */
export async function removeMemberOf(deps: Deps, caller: MemberCaller, actor: Actor, businessId: string, uid: string): Promise<void> {
  const { db, clock } = deps;
  const members = memberStore(db);
  const now = clock();
  await inBusinessTransaction(
    deps,
    businessId,
    async (tx, state) => {
      const leaving = caller.uid === uid;
      const business = leaving ? requireMember(state, caller, businessId) : requireAdmin(state, caller, businessId, "remove members");
      const target = leaving ? business.caller : await members.get(tx, businessId, uid);
      if (!target) throw noMembership(uid);
      if (target.role === "owner") {
        if (!leaving && business.callerRole !== "owner") throw notOwner("remove an owner");
        await assertNotLastOwner(deps, tx, businessId);
      }
      members.put(tx, businessId, target, null);
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
    },
    { uid: caller.uid, queueKey: memberQueueKey(businessId, uid) },
  );
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
  const members = memberStore(db);
  const held = await inBusinessTransaction(
    deps,
    id,
    async (tx, { business, subscription, member: existing }) => {
    if (!business) throw new ApiError("business_not_found", `No business '${id}'.`);
    if (existing && existing.role === role && existing.seat === seat && !existing.suspended) return { seat, changed: false };
    if (existing && existing.role === "owner" && role !== "owner") await assertNotLastOwner(deps, tx, id);
    if (seat && !existing?.seat) await assertSeatAvailable(deps, tx, id, subscription);
    const seatAt = seat ? (existing?.seat ? existing.seatAssignedAt : now) : null;
    // An operator's add restores a suspended member too, keeping what SCIM knows of them.
    members.put(
      tx,
      id,
      existing,
      existing
        ? { ...existing, role, seat, seatAssignedAt: seatAt, suspended: false }
        : { uid: user.uid, role, joinedAt: now, seat, seatAssignedAt: seatAt, source: role === "owner" ? "owner" : "invitation", suspended: false, managed: false, scim: null, groups: [] },
    );
    const event = existing
      ? outboundEvent("business.member.updated", [{ kind: "business", id }], { businessId: id, uid: user.uid, role, seat, path: `/businesses/${id}/members/${user.uid}` })
      : outboundEvent("business.member.joined", [{ kind: "business", id }], { businessId: id, uid: user.uid, role, seat, path: `/businesses/${id}/members/${user.uid}` });
    auditLog(db).record(tx, operatorOf(deps), { action: "business.member.add", target: id, details: { uid: user.uid, role, seat }, emits: [event] }, now);
    return { seat, changed: true };
    },
    { uid: user.uid, queueKey: memberQueueKey(id, user.uid, seat) },
  );
  return { businessId: id, uid: user.uid, email: user.email, role, seat: held.seat };
}

export async function removeMember(deps: OperatorDeps, input: z.input<typeof removeMemberInput>) {
  const { db, auth, clock } = deps;
  const { id, user: reference } = parseInput(removeMemberInput, input);
  const user = await findUser(auth, reference);
  await inBusinessTransaction(
    deps,
    id,
    async (tx, { business, member: target }) => {
    if (!business) throw new ApiError("business_not_found", `No business '${id}'.`);
    if (!target) throw new ApiError("membership_not_found", `${user.email ?? user.uid} is not a member of '${id}'.`);
    if (target.role === "owner") await assertNotLastOwner(deps, tx, id);
    memberStore(db).put(tx, id, target, null);
    const left = outboundEvent("business.member.left", [{ kind: "business", id }], { businessId: id, uid: user.uid, role: target.role, seat: target.seat, path: `/businesses/${id}/members` });
    auditLog(db).record(tx, operatorOf(deps), { action: "business.member.remove", target: id, details: { uid: user.uid }, emits: [left] }, clock());
    },
    { uid: user.uid, queueKey: memberQueueKey(id, user.uid) },
  );
  return { businessId: id, uid: user.uid, email: user.email, removed: true };
}

/** How many members the operators' description of a business lists (`moreMembers` says whether there are more). */
export const DESCRIBED_MEMBERS = 100;

/** Operators: a business with its first members, their roles and seats, and its subscription's seat use. */
export async function describeBusiness(deps: OperatorDeps, input: z.input<typeof businessInput>) {
  const { id } = parseInput(businessInput, input);
  const members = memberStore(deps.db);
  const [{ business, subscription }, seatsUsed, found] = await Promise.all([readBusiness(deps, null, id), members.seatsUsed(null, id), members.page(id, null, DESCRIBED_MEMBERS)]);
  if (!business) throw new ApiError("business_not_found", `No business '${id}'.`);
  const now = deps.clock();
  const shown = found.slice(0, DESCRIBED_MEMBERS);
  const entitled = await Promise.all(shown.map((member) => isEntitled(deps, id, subscription, seatsUsed, member, now)));
  const paid = subscription?.seats ?? null;
  return {
    id,
    name: business.name,
    plan: subscription?.plan ?? null,
    status: subscription ? effectiveSubscriptionStatus(subscription, now) : "none",
    seatsPaid: paid,
    seatsUsed,
    seatsHeld: paid === null ? 0 : Math.max(0, seatsUsed - paid),
    stripeCustomerId: business.stripeCustomerId,
    pendingInvitations: business.invitations.filter((invitation) => invitation.expiresAt > now).length,
    // One row per member, so the CLI's table shows them.
    members: shown.map((member, index) => ({
      uid: member.uid,
      role: member.role,
      seat: member.seat,
      entitled: entitled[index],
      seatAssignedAt: member.seatAssignedAt ? toIso(member.seatAssignedAt) : null,
      source: member.source,
      suspended: member.suspended,
    })),
    moreMembers: found.length > DESCRIBED_MEMBERS,
    verifiedDomains: business.domains.filter((domain) => domain.verifiedAt !== null).map((domain) => domain.domain),
    sso: business.sso,
  };
}
