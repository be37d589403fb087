import { concurrencyLimit } from "./concurrency";

const later = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("concurrency limit", () => {
  it("runs at most max at once, the rest in order as places free", async () => {
    const limit = concurrencyLimit(2, "uploads");
    let peak = 0;
    const order: number[] = [];
    await Promise.all(
      [0, 1, 2, 3, 4].map((n) =>
        limit.run(async () => {
          peak = Math.max(peak, limit.active);
          await later(10);
          order.push(n);
        }, 1000),
      ),
    );
    expect(peak).toBe(2);
    expect(order).toEqual([0, 1, 2, 3, 4]);
    expect(limit.active).toBe(0);
  });

  it("answers 503 unavailable with Retry-After to a caller that waited its longest, and frees places after failures", async () => {
    const limit = concurrencyLimit(1, "uploads");
    const busy = limit.run(() => later(100), 1000);
    await expect(limit.run(async () => "never", 10)).rejects.toMatchObject({ code: "unavailable", headers: { "Retry-After": "5" } });
    await busy;
    await expect(limit.run(() => Promise.reject(new Error("boom")), 10)).rejects.toThrow("boom");
    expect(await limit.run(async () => "ran", 10)).toBe("ran");
  });
});
