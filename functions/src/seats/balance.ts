import type { Transaction } from "firebase-admin/firestore";
import { roomIn } from "../access/seat-shards";
import { memberStore } from "../accounts/member-store";
import { seatShardStore } from "../accounts/seat-shard-store";
import { subscriptionStore } from "../accounts/subscription-store";
import { auditLog, systemActor } from "../core/audit-log";
import { withinDeadline } from "../core/deadline";
import type { Logger } from "../core/logger";
import type { Deps } from "../deps";
import { seated, unseated, type MemberChange } from "./ledger";
import { memberEvents } from "./member-events";

/**
 * The seat balancer (§25): after a business's paid quantity changes (Stripe, the operator), its
 * seats follow in the background, a bounded batch per transaction, so that no request waits for
 * them and no transaction grows with the business: above the quantity, the most recently seated
 * members lose their seats (and wait for one again); then the shards' shares are worked out for
 * the quantity; then those waiting longest are seated while seats are free. The subscription
 * document says `seatsPending` until it is done; the instance that follows the subscriptions (or
 * the deployment's trigger and sweep) runs it.
 */

/** Members seated or unseated per transaction: each writes its member twice, a seat shard and its event (about 400 writes, within Firestore's 500). */
export const SEAT_BATCH = 100;

export type BalanceDeps = Pick<Deps, "db" | "clock">;

type Step = { done: boolean; seated: number; unseated: number };

/** One transaction of the balancer: at most SEAT_BATCH members moved. */
async function balanceStep(deps: BalanceDeps, businessId: string): Promise<Step> {
  const { db } = deps;
  const members = memberStore(db);
  const shards = seatShardStore(db);
  const subscriptions = subscriptionStore(db);
  return withinDeadline(
    "Firestore (seat balancer)",
    db.runTransaction(async (tx): Promise<Step> => {
      const now = deps.clock();
      const subscription = await subscriptions.get(tx, businessId);
      const quantity = subscription?.seats ?? null;
      const current = await shards.all(tx, businessId);
      const finish = () => {
        if (subscription) subscriptions.seatsBalancedIn(tx, businessId);
      };
      if (quantity === null) {
        finish();
        return { done: true, seated: 0, unseated: 0 };
      }
      const used = current.reduce((sum, shard) => sum + shard.used, 0);
      if (used > quantity) {
        // The newest seats go back first (§17), and their members wait for one again.
        const latest = await members.latestSeatHolders(tx, businessId, Math.min(SEAT_BATCH, used - quantity));
        const changes = latest.map((member) => ({ before: member, after: { ...unseated(member), waitingSince: now } }));
        commit(deps, tx, businessId, changes, quantity, now);
        return { done: false, seated: 0, unseated: changes.length };
      }
      // The shares, in a step of their own: 256 writes, beside which a batch of members would pass 500.
      if (shards.shareOutIn(tx, businessId, current, quantity)) return { done: false, seated: 0, unseated: 0 };
      const room = current.map((shard) => roomIn(shard));
      const asked = Math.min(SEAT_BATCH, quantity - used);
      const waiters = await members.longestWaiting(tx, businessId, asked);
      const changes = waiters.map((member) => {
        const shard = room.findIndex((free) => free > 0);
        room[shard] -= 1;
        return { before: member, after: seated(member, shard, now) };
      });
      commit(deps, tx, businessId, changes, quantity, now);
      const done = waiters.length < asked || quantity - used - changes.length <= 0;
      if (done) finish();
      return { done, seated: changes.length, unseated: 0 };
    }),
  );
}

/** Writes the members a step moved, with one audit entry that emits their events. */
function commit(deps: BalanceDeps, tx: Transaction, businessId: string, changes: MemberChange[], quantity: number, now: Date): void {
  if (changes.length === 0) return;
  const members = memberStore(deps.db);
  for (const { before, after } of changes) members.put(tx, businessId, before, after);
  const seatedCount = changes.filter(({ after }) => after.seat).length;
  auditLog(deps.db).record(
    tx,
    systemActor("seat-balancer"),
    { action: "business.seats.balance", target: businessId, details: { quantity, seated: seatedCount, unseated: changes.length - seatedCount }, emits: memberEvents(businessId, changes) },
    now,
  );
}

/** Works a business's seats out for its quantity, a batch per transaction, until nothing is left to move. */
export async function balanceSeats(deps: BalanceDeps, businessId: string): Promise<{ seated: number; unseated: number }> {
  const total = { seated: 0, unseated: 0 };
  for (;;) {
    const step = await balanceStep(deps, businessId);
    total.seated += step.seated;
    total.unseated += step.unseated;
    if (step.done) return total;
  }
}

/** The sweep: every business whose seats wait for the balancer (a missed trigger, an instance that stopped mid-way). */
export async function sweepSeats(deps: BalanceDeps & { logger: Logger }): Promise<number> {
  const pending = await subscriptionStore(deps.db).pendingSeatBalances(100);
  for (const businessId of pending) await balanceSeats(deps, businessId).catch((error: Error) => deps.logger.warn("seat balance failed; the next sweep tries again", { businessId, error: error.message }));
  return pending.length;
}
