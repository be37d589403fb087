import type { Transaction } from "firebase-admin/firestore";
import type { z } from "zod";
import type { BusinessRole } from "../access/rules";
import type { MemberRecord } from "../accounts/business-records";
import { businessStore } from "../accounts/business-store";
import { memberStore } from "../accounts/member-store";
import type { SubscriptionRecord } from "../accounts/subscription-store";
import { applyManagedAccountState } from "../accounts/identity";
import { auditLog, type Actor } from "../core/audit-log";
import { withinDeadline } from "../core/deadline";
import { toIso } from "../core/documents";
import { ApiError } from "../core/errors";
import { outboundEvent } from "../core/event-types";
import { randomBase62 } from "../core/secret-tokens";
import type { Deps } from "../deps";
import { homeSeatShard } from "../access/seat-shards";
import { memberEvents } from "../seats/member-events";
import { passSeatOn, seated, unseated, type MemberChange } from "../seats/ledger";
import { subscriptionView } from "../subscriptions/service";
import {
  assertNotLastOwner,
  entitledMembers,
  inBusinessTransaction,
  memberQueueKey,
  notOwner,
  readBusiness,
  requireAdmin,
  requireMember,
  takeSeat,
  type MemberCaller,
  type MemberView,
} from "./membership";
import type { memberChangeSchema, memberListQuerySchema } from "./schemas";

/**
 * Businesses that run themselves (§17): owners and admins manage members, roles and seats through
 * the API. Operators do the same through the CLI (operators.ts), under the same rules (membership.ts).
 */

/** How many businesses one user may own. */
export const MAX_OWNED_BUSINESSES = 10;


/** POST /businesses: a business the caller owns, with the caller holding its first seat. */
export async function createOwnedBusiness(deps: Deps, uid: string, actor: Actor, name: string) {
  const { db, clock } = deps;
  const id = randomBase62(20);
  const now = clock();
  const created = { id, name, role: "owner" as const };
  await withinDeadline(
    "Firestore",
    db.runTransaction(async (tx) => {
      const members = memberStore(db);
      if ((await members.ownedCount(tx, uid)) >= MAX_OWNED_BUSINESSES) {
        throw new ApiError("business_limit_reached", `You own ${MAX_OWNED_BUSINESSES} businesses, the most one person may; hand one over or leave one first.`);
      }
      businessStore(db).createFreshIn(tx, id, name);
      members.put(tx, id, null, { uid, role: "owner", joinedAt: now, seat: true, seatAssignedAt: now, seatShard: homeSeatShard(uid), waitingSince: null, source: "owner", suspended: false, managed: false, scim: null, groups: [] });
      auditLog(db).record(tx, actor, { action: "business.create", target: id, details: { name, owner: uid }, answer: created }, now);
    }),
  );
  return created;
}

/** GET /businesses/:id: the business as the calling member sees it. */
export async function getBusiness(deps: Deps, caller: MemberCaller, businessId: string) {
  const [state, seatsUsed] = await Promise.all([readBusiness(deps, null, businessId, caller.uid), memberStore(deps.db).seatsUsed(businessId)]);
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
    memberStore(deps.db).seatsUsed(businessId),
  ]);
  const byUid = new Map(users.map((user) => [user.uid, user]));
  const now = deps.clock();
  const entitled = await entitledMembers(deps, businessId, subscription, seatsUsed, members, now);
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
      let updated: MemberRecord = { ...target, role };
      // A seat taken goes to whoever waits longest; one given is counted in a shard with room.
      let seatedWaiters: MemberChange[] = [];
      if (seat && !target.seat) updated = seated(updated, await takeSeat(deps, tx, businessId, state.subscription), now);
      if (!seat && (target.seat || target.waitingSince !== null)) {
        updated = unseated(updated);
        seatedWaiters = await passSeatOn(db, tx, businessId, state.subscription?.seats ?? null, target, now);
      }
      if (role !== target.role || seat !== target.seat || updated.waitingSince !== target.waitingSince) {
        members.put(tx, businessId, target, updated);
        for (const waiter of seatedWaiters) members.put(tx, businessId, waiter.before, waiter.after);
        const previousRole = role !== target.role ? { previousRole: target.role } : {};
        auditLog(db).record(
          tx,
          actor,
          {
            action: "business.member.change",
            target: businessId,
            details: { uid, role, seat, ...previousRole },
            emits: [
              outboundEvent("business.member.updated", [{ kind: "business", id: businessId }], { businessId, uid, role, seat, ...previousRole, path: `/businesses/${businessId}/members/${uid}` }),
              ...memberEvents(businessId, seatedWaiters),
            ],
          },
          now,
        );
      }
      return { subscription: state.subscription, member: updated };
    },
    { uid: caller.uid, queueKey: memberQueueKey(businessId, uid) },
  );
  return (await memberViews(deps, businessId, subscription, [member]))[0];
}

/** DELETE /businesses/:id/members/:uid: an owner or admin removes someone, or a member leaves. */
export async function removeMemberOf(deps: Deps, caller: MemberCaller, actor: Actor, businessId: string, uid: string): Promise<void> {
  const { db, clock } = deps;
  const members = memberStore(db);
  const now = clock();
  const removed = await inBusinessTransaction(
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
      // The seat goes to whoever waits longest, in this change.
      const seatedWaiters = await passSeatOn(db, tx, businessId, state.subscription?.seats ?? null, target, now);
      members.put(tx, businessId, target, null);
      for (const waiter of seatedWaiters) members.put(tx, businessId, waiter.before, waiter.after);
      auditLog(db).record(
        tx,
        actor,
        {
          action: leaving ? "business.member.leave" : "business.member.remove",
          target: businessId,
          details: { uid, role: target.role, seat: target.seat },
          emits: [outboundEvent("business.member.left", [{ kind: "business", id: businessId }], { businessId, uid, role: target.role, seat: target.seat, path: `/businesses/${businessId}/members` }), ...memberEvents(businessId, seatedWaiters)],
        },
        now,
      );
      return target;
    },
    { uid: caller.uid, queueKey: memberQueueKey(businessId, uid) },
  );
  // An account this business's SCIM made is disabled with its membership (§22), not deleted.
  await applyManagedAccountState(deps.auth, removed, true);
}
