import { memo } from "./memo";

describe("memo", () => {
  let time = 0;
  const clock = () => time;

  it("serves a value for its lifetime, then loads it again", async () => {
    const cache = memo<number>({ ttlMs: 1000, maxEntries: 10, clock });
    let loads = 0;
    const load = async () => ++loads;
    expect(await cache.get("a", load)).toBe(1);
    time += 999;
    expect(await cache.get("a", load)).toBe(1);
    time += 1;
    expect(await cache.get("a", load)).toBe(2);
  });

  it("shares one load between concurrent misses and keeps no failure", async () => {
    const cache = memo<string>({ ttlMs: 1000, maxEntries: 10, clock });
    let loads = 0;
    const slow = () => new Promise<string>((resolve) => setTimeout(() => resolve(`v${++loads}`), 5));
    expect(await Promise.all([cache.get("k", slow), cache.get("k", slow)])).toEqual(["v1", "v1"]);
    await expect(cache.get("bad", () => Promise.reject(new Error("down")))).rejects.toThrow("down");
    expect(await cache.get("bad", async () => "recovered")).toBe("recovered");
  });

  it("holds at most maxEntries, and nothing with a lifetime of 0", async () => {
    const cache = memo<number>({ ttlMs: 1000, maxEntries: 2, clock });
    let loads = 0;
    for (const key of ["a", "b", "c"]) await cache.get(key, async () => ++loads);
    expect(await cache.get("a", async () => ++loads)).toBe(4);
    const never = memo<number>({ ttlMs: 0, maxEntries: 2, clock });
    expect(await never.get("x", async () => 1)).toBe(1);
    expect(await never.get("x", async () => 2)).toBe(2);
  });
});

describe("memo with stamps", () => {
  it("serves an entry only to gets with its stamp", async () => {
    const cache = memo<number>({ ttlMs: 60_000, maxEntries: 10, clock: () => 0 });
    let loads = 0;
    const load = async () => ++loads;
    expect(await cache.get("a", load, 1)).toBe(1);
    expect(await cache.get("a", load, 1)).toBe(1);
    expect(await cache.get("a", load, 2)).toBe(2);
    expect(await cache.get("a", load, 2)).toBe(2);
    // An older stamp is no match either: what it loads replaces the entry.
    expect(await cache.get("a", load, 1)).toBe(3);
  });

  it("keeps a newer load when an older one fails after it", async () => {
    const cache = memo<string>({ ttlMs: 60_000, maxEntries: 10, clock: () => 0 });
    let fail!: (error: Error) => void;
    const failing = cache.get("k", () => new Promise<string>((_, reject) => (fail = reject)), 1);
    expect(await cache.get("k", async () => "fresh", 2)).toBe("fresh");
    fail(new Error("down"));
    await expect(failing).rejects.toThrow("down");
    expect(await cache.get("k", async () => "again", 2)).toBe("fresh");
  });
});
