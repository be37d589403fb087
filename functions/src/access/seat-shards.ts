import { createHash } from "node:crypto";

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
 * shards, each member's own among them, while 10 SCIM clients seating a company's thousands meet
 * in one shard rarely and write each about once in two seconds at 80 seats a second (`npm run bench -- --limits`).
 */

export const SEAT_SHARDS = 128;
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
 * The shard a member's seat is given in first under this quantity (spreads a business's members
 * evenly over its active shards); without one, over all shards: where a seat that names no shard
 * is counted (seats from before the shards, `migrate seats`).
 */
export function homeSeatShard(uid: string, quantity: number | null = null): number {
  return createHash("sha256").update(uid).digest().readUInt32BE(0) % activeShards(quantity);
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
 * Where a seat goes when its member's own shard is full, all shards read: the shard with the
 * most room (stamped), or the member's own when the shares are not worked out and the total has
 * room. Null: every paid seat is taken. `moved` are this change's seats given minus freed per shard.
 */
export function shardWithRoom(shards: readonly SeatShardState[], quantity: number, home: number, moved: ReadonlyMap<number, number>): number | null {
  if (stampedFor(shards, quantity)) {
    let best: SeatShardState | null = null;
    for (const shard of shards) if (roomIn(shard, moved.get(shard.index)) > 0 && (!best || roomIn(shard, moved.get(shard.index)) > roomIn(best, moved.get(best.index)))) best = shard;
    return best?.index ?? null;
  }
  const total = shards.reduce((sum, shard) => sum + shard.used + (moved.get(shard.index) ?? 0), 0);
  return total < quantity ? home : null;
}
