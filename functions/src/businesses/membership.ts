import type { Transaction } from "firebase-admin/firestore";
import { drawsOnSubscription, ssoBlocks, subscriptionGrants, type BusinessRole } from "../access/rules";
import type { BusinessRecord, MemberRecord } from "../accounts/business-records";
import { businessStore } from "../accounts/business-store";
import { memberStore } from "../accounts/member-store";
import { seatTransaction } from "../accounts/seat-shard-store";
import { subscriptionStore, type SubscriptionRecord } from "../accounts/subscription-store";
import type { Caller } from "../core/auth";
import { instanceQueue } from "../core/concurrency";
import { withinDeadline } from "../core/deadline";
import { ApiError } from "../core/errors";
import type { Deps } from "../deps";
import { noSeatAvailable, seatLedger } from "../seats/ledger";

/**
 * What every change to a business shares (§17, §25): reading a business with its subscription and
 * the asking member, who may do what, seats and entitlement, the last owner, and the transaction
 * (with its queue key) every change runs in. Members are documents of their own: a change to one
 * is a transaction on that member and the business's document (read, so that settings hold), plus
 * a seat shard when a seat is given under a paid quantity (seats/ledger.ts keeps the limit exact).
 */

export const noBusiness = (businessId: string) => new ApiError("business_not_found", `No business '${businessId}' of which you are a member.`);
const notAdmin = (what: string) => new ApiError("not_business_admin", `Only an owner or admin of this business may ${what}.`);
export const notOwner = (what: string) => new ApiError("not_business_admin", `Only an owner of this business may ${what}.`);

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
 * A seat, in the change's transaction: the shard it is counted in, or 409 `no_seat_available`
 * when the paid ones are taken (seats/ledger.ts: one shard read while the shard offered first has
 * room, all of them otherwise).
 */
export async function takeSeat(deps: Pick<Deps, "db">, tx: Transaction, businessId: string, subscription: SubscriptionRecord | null): Promise<number> {
  const quantity = subscription?.seats ?? null;
  const ledger = seatLedger(deps.db, tx, businessId, quantity);
  const shard = await ledger.take();
  if (shard === null) throw await noSeatAvailable(ledger, quantity!);
  return shard;
}

/** Refuses a new seat invitation when the seats in use and the pending seat invitations take every paid seat (§17). */
export async function assertSeatForInvitation(deps: Pick<Deps, "db">, tx: Transaction, businessId: string, subscription: SubscriptionRecord | null, pendingSeatInvitations: number): Promise<void> {
  const quantity = subscription?.seats ?? null;
  if (quantity === null) return;
  const ledger = seatLedger(deps.db, tx, businessId, quantity);
  if ((await ledger.inUse()) + pendingSeatInvitations >= quantity) throw await noSeatAvailable(ledger, quantity, pendingSeatInvitations);
}

/** Whether a member draws on the business's subscription now (a count of seat holders only while the quantity is below the seats in use). */
export async function isEntitled(deps: Pick<Deps, "db">, businessId: string, subscription: SubscriptionRecord | null, seatsUsed: number, member: MemberRecord, now: Date): Promise<boolean> {
  if (member.suspended) return false;
  const paid = subscription?.seats ?? null;
  const standing = await memberStore(deps.db).standing(businessId, member, seatsUsed, [paid]);
  return subscriptionGrants(subscription, drawsOnSubscription(standing, paid), now);
}

/** Which of a page of members draw on the business's subscription now, in their order. */
export function entitledMembers(deps: Pick<Deps, "db">, businessId: string, subscription: SubscriptionRecord | null, seatsUsed: number, members: MemberRecord[], now: Date): Promise<boolean[]> {
  return Promise.all(members.map((member) => isEntitled(deps, businessId, subscription, seatsUsed, member, now)));
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
    withinDeadline("Firestore", seatTransaction(deps.db, async (tx) => change(tx, await readBusiness(deps, tx, businessId, options.uid ?? null)))),
  );
}

/**
 * The queue key of a change to one member: by member, so that a business's members change in
 * parallel (§25); a seat given reads one seat shard, not a business-wide count (seats/ledger.ts).
 */
export const memberQueueKey = (businessId: string, uid: string) => `${businessId}/${uid}`;

/**
 * Refuses to take the business's last owner: reads (in the transaction) up to two owners, so that
 * two owners demoting each other at once cannot both succeed.
 */
export async function assertNotLastOwner(deps: Pick<Deps, "db">, tx: Transaction, businessId: string): Promise<void> {
  if ((await memberStore(deps.db).owners(tx, businessId, 2)).length < 2) throw lastOwner();
}
const lastOwner = () => new ApiError("last_owner", "A business keeps at least one owner: make someone else an owner first.");
