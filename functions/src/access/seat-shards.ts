import { createHash, randomInt } from "node:crypto";

/**
 * How a business's seats are counted without one document every seat change contends on (§25).
 * The seats in use are spread over SEAT_SHARDS shards; under a paid quantity each shard also
 * holds a share of it (`cap`), stamped with the quantity the shares were worked out for (`q`).
 * While every shard is stamped with the current quantity, the shares add up to it and no shard
 * holds more seats than its share: a seat given where its shard has room keeps the total within
 * the quantity, reading only that shard. Otherwise (a shard full, or the quantity changed and the
 * shares are not yet worked out anew) all shards are read, which is exact whatever their state.
 *
 * How many shards a quantity's free seats are spread over grows with it (`activeShards`: one per
 * SEATS_PER_SHARD seats, up to SEAT_SHARDS), so that a team of 10 keeps its free seats in three
 * shards, while 10 SCIM clients seating a company's thousands meet
 * in one shard rarely and write each about once in two seconds at 80 seats a second (`npm run bench -- --limits`).
 * A seat is first offered in the next of the active shards (`nextSeatShard`: each process takes
 * them in turn), so that 135 members seated a second by one process write each of 256 shards about
 * half a time a second.
 */

export const SEAT_SHARDS = 256;
/** Free seats per shard a quantity is spread for. */
export const SEATS_PER_SHARD = 4;

/** The shards a quantity's free seats are spread over: the first `activeShards` (all of them without a quantity). */
export const activeShards = (quantity: number | null) => (quantity === null ? SEAT_SHARDS : Math.min(SEAT_SHARDS, Math.max(1, Math.ceil(quantity / SEATS_PER_SHARD))));

/** One shard as read: seats counted in it, and its share of the quantity (null: none worked out). */
export interface SeatShardState {
  index: number;
  used: number;
  cap: number | null;
  /** The quantity `cap` was worked out for (null: never). */
  q: number | null;
}

/**
 * The shard a seat that names none is counted in: a seat given before the shards (`migrate seats`
 * counts it there), or by a writer that did not name one.
 */
export function homeSeatShard(uid: string): number {
  return createHash("sha256").update(uid).digest().readUInt32BE(0) % SEAT_SHARDS;
}

/** How many seats this process offered, from a random start (the next is offered in the shard this names, modulo the active shards). */
let offered = randomInt(SEAT_SHARDS);

/**
 * The shard a seat is offered in first under this quantity: the quantity's active shards in turn
 * (all of them without a quantity), so that seats given one after another, whoever they are for,
 * spread evenly over the shards, each shard taking one before any takes two.
 */
export function nextSeatShard(quantity: number | null): number {
  offered += 1;
  return offered % activeShards(quantity);
}

/** Whether every shard's share was worked out for this quantity (the shares then add up to it). */
export const stampedFor = (shards: readonly SeatShardState[], quantity: number) => shards.length === SEAT_SHARDS && shards.every((shard) => shard.q === quantity && shard.cap !== null);

/** Seats a shard has room for, with what this change already moved (`moved`: its seats given minus freed). */
export const roomIn = (shard: SeatShardState, moved = 0) => (shard.cap ?? 0) - shard.used - moved;

/**
 * Shares of `quantity` over shards holding `used` seats each: every shard keeps what it holds,
 * and the seats still free are spread evenly over the quantity's active shards (so that each has
 * room for the seats given there next, its members' own). Null when the seats in use exceed the
 * quantity (members must lose seats first).
 */
export function sharesOf(used: readonly number[], quantity: number): number[] | null {
  const total = used.reduce((sum, count) => sum + Math.max(0, count), 0);
  if (total > quantity) return null;
  const caps = used.map((count) => Math.max(0, count));
  const active = Math.min(caps.length, activeShards(quantity));
  let spare = quantity - total;
  const perShard = Math.floor(spare / active);
  spare -= perShard * active;
  return caps.map((cap, index) => (index < active ? cap + perShard + (index < spare ? 1 : 0) : cap));
}

/**
 * Where a seat goes when the shard it was offered in first (`first`) is full, all shards read: the
 * shard with the most room (stamped), or `first` when the shares are not worked out and the total has
 * room. Null: every paid seat is taken. `moved` are this change's seats given minus freed per shard.
 */
export function shardWithRoom(shards: readonly SeatShardState[], quantity: number, first: number, moved: ReadonlyMap<number, number>): number | null {
  if (stampedFor(shards, quantity)) {
    let best: SeatShardState | null = null;
    for (const shard of shards) if (roomIn(shard, moved.get(shard.index)) > 0 && (!best || roomIn(shard, moved.get(shard.index)) > roomIn(best, moved.get(best.index)))) best = shard;
    return best?.index ?? null;
  }
  const total = shards.reduce((sum, shard) => sum + shard.used + (moved.get(shard.index) ?? 0), 0);
  return total < quantity ? first : null;
}
