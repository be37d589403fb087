import type { z } from "zod";
import { effectiveSubscriptionStatus } from "../access/rules";
import type { MemberRecord } from "../accounts/business-records";
import { businessStore } from "../accounts/business-store";
import { findUser } from "../accounts/identity";
import { memberStore } from "../accounts/member-store";
import { auditLog, operatorOf } from "../core/audit-log";
import { withinDeadline } from "../core/deadline";
import { toIso } from "../core/documents";
import { ApiError } from "../core/errors";
import { outboundEvent } from "../core/event-types";
import { parseInput } from "../core/validation";
import type { OperatorDeps } from "../deps";
import { assertNotLastOwner, entitledMembers, inBusinessTransaction, memberQueueKey, readBusiness, takeSeat } from "./membership";
import { passSeatOn, seated, unseated } from "../seats/ledger";
import { memberEvents } from "../seats/member-events";
import { createBusinessInput, describeBusinessInput, memberInput, removeMemberInput } from "./schemas";

/** Operators (the CLI, the seed, the bench): the documents and rules of the API's changes, by business id and user reference. */

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
    const base: MemberRecord = existing
      ? { ...existing, role, suspended: false }
      : { uid: user.uid, role, joinedAt: now, seat: false, seatAssignedAt: null, seatShard: null, waitingSince: null, source: role === "owner" ? "owner" : "invitation", suspended: false, managed: false, scim: null, groups: [] };
    // An operator's add restores a suspended member too, keeping what SCIM knows of them; a seat
    // taken from them goes to whoever waits longest.
    const kept = seat && existing?.seat ? base : null;
    const after = kept ?? (seat ? seated(base, await takeSeat(deps, tx, id, subscription), now) : unseated(base));
    const seatedWaiters = existing && !seat ? await passSeatOn(db, tx, id, subscription?.seats ?? null, existing, now) : [];
    members.put(tx, id, existing, after);
    for (const waiter of seatedWaiters) members.put(tx, id, waiter.before, waiter.after);
    const event = existing
      ? outboundEvent("business.member.updated", [{ kind: "business", id }], { businessId: id, uid: user.uid, role, seat, path: `/businesses/${id}/members/${user.uid}` })
      : outboundEvent("business.member.joined", [{ kind: "business", id }], { businessId: id, uid: user.uid, role, seat, path: `/businesses/${id}/members/${user.uid}` });
    auditLog(db).record(tx, operatorOf(deps), { action: "business.member.add", target: id, details: { uid: user.uid, role, seat }, emits: [event, ...memberEvents(id, seatedWaiters)] }, now);
    return { seat, changed: true };
    },
    { uid: user.uid, queueKey: memberQueueKey(id, user.uid) },
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
    async (tx, { business, subscription, member: target }) => {
    if (!business) throw new ApiError("business_not_found", `No business '${id}'.`);
    if (!target) throw new ApiError("membership_not_found", `${user.email ?? user.uid} is not a member of '${id}'.`);
    if (target.role === "owner") await assertNotLastOwner(deps, tx, id);
    const now = clock();
    const seatedWaiters = await passSeatOn(db, tx, id, subscription?.seats ?? null, target, now);
    memberStore(db).put(tx, id, target, null);
    for (const waiter of seatedWaiters) memberStore(db).put(tx, id, waiter.before, waiter.after);
    const left = outboundEvent("business.member.left", [{ kind: "business", id }], { businessId: id, uid: user.uid, role: target.role, seat: target.seat, path: `/businesses/${id}/members` });
    auditLog(db).record(tx, operatorOf(deps), { action: "business.member.remove", target: id, details: { uid: user.uid }, emits: [left, ...memberEvents(id, seatedWaiters)] }, now);
    },
    { uid: user.uid, queueKey: memberQueueKey(id, user.uid) },
  );
  return { businessId: id, uid: user.uid, email: user.email, removed: true };
}

/**
 * Operators: a business with a page of its members (by when they joined, `limit` of them, 100
 * unless asked), their roles, seats and entitlement, and its subscription's seat use. `after` (a
 * uid the previous page ended with, as `nextAfter` says) continues a large business's list.
 */
export async function describeBusiness(deps: OperatorDeps, input: z.input<typeof describeBusinessInput>) {
  const { id, after, limit } = parseInput(describeBusinessInput, input);
  const members = memberStore(deps.db);
  const afterMember = after ? await members.get(null, id, after) : null;
  if (after && !afterMember) throw new ApiError("membership_not_found", `No member '${after}' in '${id}' to continue after.`);
  const [{ business, subscription }, seatsUsed, found] = await Promise.all([
    readBusiness(deps, null, id),
    members.seatsUsed(id),
    members.page(id, afterMember ? members.positionOf(afterMember) : null, limit),
  ]);
  if (!business) throw new ApiError("business_not_found", `No business '${id}'.`);
  const now = deps.clock();
  const shown = found.slice(0, limit);
  const entitled = await entitledMembers(deps, id, subscription, seatsUsed, shown, now);
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
    nextAfter: found.length > limit ? (shown.at(-1)?.uid ?? null) : null,
    verifiedDomains: business.domains.filter((domain) => domain.verifiedAt !== null).map((domain) => domain.domain),
    sso: business.sso,
    // §26: its own publisher id, and its install policy's version and mode (GET /businesses/:id/policy has the rules).
    publisherId: business.publisherId,
    policy: business.policy && { version: business.policy.version, mode: business.policy.mode },
  };
}
