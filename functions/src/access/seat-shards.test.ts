import fc from "fast-check";
import { activeShards, homeSeatShard, nextSeatShard, SEAT_SHARDS, shardWithRoom, sharesOf, stampedFor, type SeatShardState } from "./seat-shards";

const shardsOf = (used: number[], caps: number[] | null, q: number | null): SeatShardState[] => used.map((count, index) => ({ index, used: count, cap: caps ? caps[index] : null, q }));
const zeros = () => Array.from({ length: SEAT_SHARDS }, () => 0);

describe("seat shards", () => {
  it("count a seat that names no shard in its member's own, spread over every shard", () => {
    const homes = Array.from({ length: 5_000 }, (_, index) => homeSeatShard(`user-${index}`));
    expect(new Set(homes).size).toBe(SEAT_SHARDS);
    expect(homeSeatShard("user-7")).toBe(homes[7]);
  });

  it("spread a quantity's free seats over as many shards as it needs, and offer seats in each in turn", () => {
    expect([1, 4, 10, 25, 250, 100_000].map(activeShards)).toEqual([1, 1, 3, 7, 63, SEAT_SHARDS]);
    expect(activeShards(SEAT_SHARDS * 4 - 1)).toBe(SEAT_SHARDS);
    expect(activeShards(null)).toBe(SEAT_SHARDS);
    // A team of 10: three shards of four, three and three, and every member's first shard is one of them.
    expect(sharesOf(zeros(), 10)!.slice(0, 4)).toEqual([4, 3, 3, 0]);
    const firsts = Array.from({ length: 200 }, () => nextSeatShard(10));
    expect([...new Set(firsts)].sort()).toEqual([0, 1, 2]);
    // Offered in turn: no shard twice before each of the three once.
    for (let index = 3; index < firsts.length; index += 1) expect(firsts[index]).toBe(firsts[index - 3]);
    // Seats held beyond the active shards stay where they are counted, with no room beside them.
    const used = zeros();
    used[40] = 3;
    const caps = sharesOf(used, 10)!;
    expect([caps[0], caps[1], caps[2], caps[40]]).toEqual([3, 2, 2, 3]);
  });

  it("share a quantity so that every shard keeps its seats and the shares add up to it", () => {
    fc.assert(
      fc.property(fc.array(fc.nat(50), { minLength: SEAT_SHARDS, maxLength: SEAT_SHARDS }), fc.nat(2_000), (used, quantity) => {
        const caps = sharesOf(used, quantity);
        const total = used.reduce((sum, count) => sum + count, 0);
        if (total > quantity) return expect(caps).toBeNull();
        expect(caps!.reduce((sum, cap) => sum + cap, 0)).toBe(quantity);
        caps!.forEach((cap, index) => expect(cap).toBeGreaterThanOrEqual(used[index]));
      }),
    );
  });

  it("find the shard with the most room once shares are worked out, and none when every seat is taken", () => {
    const used = zeros();
    used[2] = 1;
    const caps = zeros();
    caps[2] = 1;
    caps[5] = 2;
    const shards = shardsOf(used, caps, 3);
    expect(stampedFor(shards, 3)).toBe(true);
    expect(shardWithRoom(shards, 3, 2, new Map())).toBe(5);
    expect(shardWithRoom(shards, 3, 2, new Map([[5, 2]]))).toBeNull();
    // A seat freed in this change is room again.
    expect(shardWithRoom(shards, 3, 9, new Map([[5, 2], [2, -1]]))).toBe(2);
  });

  it("without shares for the quantity (it changed, or none were worked out), give the shard offered first while the total has room", () => {
    const used = zeros();
    used[0] = 2;
    expect(stampedFor(shardsOf(used, zeros(), 5), 3)).toBe(false);
    expect(shardWithRoom(shardsOf(used, null, null), 3, 7, new Map())).toBe(7);
    expect(shardWithRoom(shardsOf(used, null, null), 3, 7, new Map([[7, 1]]))).toBeNull();
  });

  it("never let the seats in use pass the quantity, whatever the order of gives and frees (property)", () => {
    fc.assert(
      fc.property(fc.nat(40), fc.array(fc.tuple(fc.boolean(), fc.nat(SEAT_SHARDS - 1)), { maxLength: 120 }), (quantity, steps) => {
        const shards = shardsOf(zeros(), sharesOf(zeros(), quantity), quantity);
        for (const [give, home] of steps) {
          if (give) {
            // The fast path: the shard offered first when it has room; else all shards read.
            const own = shards[home];
            const index = (own.cap ?? 0) - own.used > 0 ? home : shardWithRoom(shards, quantity, home, new Map());
            if (index !== null) shards[index].used += 1;
          } else {
            const held = shards.find((shard) => shard.used > 0);
            if (held) held.used -= 1;
          }
          expect(shards.reduce((sum, shard) => sum + shard.used, 0)).toBeLessThanOrEqual(quantity);
          shards.forEach((shard) => expect(shard.used).toBeLessThanOrEqual(shard.cap!));
        }
      }),
    );
  });
});
