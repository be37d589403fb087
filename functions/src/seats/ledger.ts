import type { Firestore, Transaction } from "firebase-admin/firestore";
import { nextSeatShard, shardWithRoom, roomIn, stampedFor, type SeatShardState } from "../access/seat-shards";
import { byJoinOrder, type MemberRecord } from "../accounts/business-records";
import { memberStore } from "../accounts/member-store";
import { SeatSharesNeeded, seatShardStore } from "../accounts/seat-shard-store";
import { ApiError } from "../core/errors";

/**
 * A change's seats, inside its transaction (§17, §25): where a seat given is counted, whether one
 * is free, and who gets the seats the change frees. A seat is taken in the shard it is offered in
 * first (the next of the quantity's active shards) when that has room (one document read, without
 * a lock: the write is conditional on it); otherwise all shards are read, which is exact
 * (access/seat-shards.ts).
 * Nothing here writes: member-store's `put` moves the shards as each member is written. Every read
 * happens before the change's first write, as Firestore's transactions require.
 */
export interface SeatLedger {
  /** The shard where one more seat is counted; null when every paid seat is taken. */
  take(): Promise<number | null>;
  /** A seat this change frees (its holder's shard), for the rest of the change to give. */
  release(shard: number): void;
  /** Seats this change freed so far (whether or not it gave them again). */
  readonly freed: number;
  /** The seats in use across the business, all shards read (with what this change moved). */
  inUse(): Promise<number>;
}

export function seatLedger(db: Firestore, tx: Transaction, businessId: string, quantity: number | null): SeatLedger {
  const store = seatShardStore(db);
  const known = new Map<number, SeatShardState>();
  let everyShardRead = false;
  /** This change's seats given minus freed, per shard. */
  const moved = new Map<number, number>();
  let freed = 0;
  const bump = (index: number, delta: number) => moved.set(index, (moved.get(index) ?? 0) + delta);
  /** The seats in use over these shards, with what this change moved. */
  const inUseOf = (shards: readonly SeatShardState[]) => shards.reduce((sum, shard) => sum + shard.used + (moved.get(shard.index) ?? 0), 0);
  const readAll = async () => {
    if (everyShardRead) return [...known.values()];
    for (const shard of await store.all(tx, businessId)) known.set(shard.index, shard);
    everyShardRead = true;
    return [...known.values()];
  };
  return {
    get freed() {
      return freed;
    },
    release(shard) {
      bump(shard, -1);
      freed += 1;
    },
    async take() {
      const given = (index: number) => {
        bump(index, 1);
        return index;
      };
      const first = nextSeatShard(quantity);
      // No quantity: nothing to refuse, only a count to keep.
      if (quantity === null) return given(first);
      if (!known.has(first)) {
        // Read without a lock; the seat's write holds only if the shard is still as read (seat-shard-store.ts).
        const { shard, updateTime } = await store.peek(businessId, first);
        known.set(first, shard);
        if (updateTime) store.guard(tx, businessId, first, updateTime);
      }
      const offered = known.get(first)!;
      if (offered.q === quantity && roomIn(offered, moved.get(first)) > 0) return given(first);
      if (everyShardRead) {
        const index = shardWithRoom([...known.values()], quantity, first, moved);
        return index === null ? null : given(index);
      }
      // Every shard read without a lock: while all are shared out for this quantity, the shard a
      // seat is given in bounds it (its share), so its write alone is guarded; a "none free" read
      // this way may be a moment late, and the member then waits for the next seat freed.
      const peeked = await store.peekAll(businessId);
      const shards = peeked.map(({ shard }) => shard);
      if (stampedFor(shards, quantity)) {
        const index = shardWithRoom(shards, quantity, first, moved);
        if (index === null) return null;
        store.guard(tx, businessId, index, peeked[index].updateTime!);
        if (!known.has(index)) known.set(index, peeked[index].shard);
        return given(index);
      }
      // Not shared out for this quantity: none free when the seats in use reach it; otherwise the
      // shards are shared out first (seatTransaction), rather than every one read and held here.
      if (inUseOf(shards) >= quantity) return null;
      throw new SeatSharesNeeded(businessId);
    },
    async inUse() {
      return inUseOf(await readAll());
    },
  };
}

/** The answer to a seat asked for when every paid one is taken (§17's 409). */
export async function noSeatAvailable(ledger: SeatLedger, quantity: number, pendingSeatInvitations = 0): Promise<ApiError> {
  const pending = pendingSeatInvitations > 0 ? ` and ${pendingSeatInvitations} pending seat invitation${pendingSeatInvitations === 1 ? "" : "s"}` : "";
  return new ApiError("no_seat_available", `All ${quantity} paid seats are taken (${await ledger.inUse()} in use${pending}): free one, or buy more seats.`);
}

/** A member before and after a change (null before: they join). */
export interface MemberChange {
  before: MemberRecord | null;
  after: MemberRecord;
}

/** Who waits in what order: longest waiting first, then (those who began waiting together) in the order they joined. */
const byWaiting = (a: MemberRecord, b: MemberRecord) => (a.waitingSince?.getTime() ?? 0) - (b.waitingSince?.getTime() ?? 0) || byJoinOrder(a, b);

/** A member seated now: the seat counted in `shard`, and no longer waiting. */
export const seated = (member: MemberRecord, shard: number, now: Date): MemberRecord => ({ ...member, seat: true, seatAssignedAt: now, seatShard: shard, waitingSince: null });

/** A member without a seat, and not waiting for one. */
export const unseated = (member: MemberRecord): MemberRecord => ({ ...member, seat: false, seatAssignedAt: null, seatShard: null, waitingSince: null });

/**
 * The seats of a change, inside its transaction: the seats its members give up are freed, and go
 * first to those waiting longest (read here: at most as many as were freed, the change's own
 * members aside), with the change's own waiting members in their turn; then whoever still waits
 * takes a seat while any is free, and whoever gets none keeps waiting. Returns the changes with
 * their seats, and the waiters seated elsewhere (as changes of their own).
 */
export async function giveSeats(db: Firestore, ledger: SeatLedger, tx: Transaction, businessId: string, changes: MemberChange[], now: Date): Promise<MemberChange[]> {
  const inChange = new Set(changes.map(({ after }) => after.uid));
  for (const { before, after } of changes) if (before?.seat && !after.seat) ledger.release(before.seatShard!);
  const freed = ledger.freed;
  const waiters =
    freed > 0
      ? (await memberStore(db).longestWaiting(tx, businessId, freed + inChange.size)).filter((member) => !inChange.has(member.uid) && !member.suspended).slice(0, freed)
      : [];
  const all: MemberChange[] = [...changes, ...waiters.map((member) => ({ before: member, after: member }))];
  const queue = all.filter(({ after }) => !after.seat && !after.suspended && after.waitingSince !== null).sort((a, b) => byWaiting(a.after, b.after));
  const given = new Map<string, MemberRecord>();
  for (const { after } of queue) {
    const shard = await ledger.take();
    if (shard === null) break;
    given.set(after.uid, seated(after, shard, now));
  }
  return all.flatMap((change) => {
    const after = given.get(change.after.uid) ?? change.after;
    return inChange.has(after.uid) || after !== change.after ? [{ before: change.before, after }] : [];
  });
}

/**
 * A seat its holder gives up (removed, left, unseated, suspended), passed on in the same change:
 * to whoever waits longest, when anyone waits. Read before the change's first write; returns the
 * waiter seated (none when nobody waits, or the member held no seat).
 */
export async function passSeatOn(db: Firestore, tx: Transaction, businessId: string, quantity: number | null, holder: MemberRecord, now: Date): Promise<MemberChange[]> {
  if (!holder.seat) return [];
  const ledger = seatLedger(db, tx, businessId, quantity);
  ledger.release(holder.seatShard!);
  return giveSeats(db, ledger, tx, businessId, [], now);
}
