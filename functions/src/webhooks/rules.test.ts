import { failedTooLong, slotFree, verdictOf } from "./rules";

const SCHEDULE = [5, 300, 1_800, 7_200, 18_000, 36_000, 36_000].map((seconds) => seconds * 1000);
const now = new Date("2026-01-01T00:00:00Z");

describe("webhook retries (§21)", () => {
  it("succeeds on any 2xx, and fails a 3xx, 4xx, 5xx or no answer", () => {
    for (const statusCode of [200, 201, 204, 299]) expect(verdictOf({ statusCode }, 1, SCHEDULE, now)).toEqual({ status: "succeeded" });
    for (const statusCode of [301, 400, 404, 500, null]) expect(verdictOf({ statusCode }, 1, SCHEDULE, now).status).toBe("pending");
  });

  it("waits by the schedule with ±10 % jitter, then fails after the last retry", () => {
    SCHEDULE.forEach((wait, index) => {
      for (const random of [0, 0.5, 0.999]) {
        const verdict = verdictOf({ statusCode: 500 }, index + 1, SCHEDULE, now, () => random);
        if (verdict.status !== "pending") throw new Error("expected a retry");
        const delay = verdict.nextAttemptAt.getTime() - now.getTime();
        expect(delay).toBeGreaterThanOrEqual(wait * 0.9);
        expect(delay).toBeLessThanOrEqual(wait * 1.1);
      }
    });
    expect(verdictOf({ statusCode: 500 }, SCHEDULE.length + 1, SCHEDULE, now)).toEqual({ status: "failed" });
  });

  it("honours a Retry-After up to 24 hours, a longer one as 24 hours", () => {
    const day = 24 * 3_600_000;
    expect(verdictOf({ statusCode: 429, retryAfterMs: 99_999_999_000 }, 1, SCHEDULE, now, () => 0.5)).toEqual({ status: "pending", nextAttemptAt: new Date(now.getTime() + day) });
    expect(verdictOf({ statusCode: 503, retryAfterMs: day - 1_000 }, 1, SCHEDULE, now, () => 0.5)).toEqual({ status: "pending", nextAttemptAt: new Date(now.getTime() + day - 1_000) });
  });

  it("honours a longer Retry-After, and disables on 410", () => {
    const verdict = verdictOf({ statusCode: 429, retryAfterMs: 60_000 }, 1, SCHEDULE, now, () => 0.5);
    expect(verdict).toEqual({ status: "pending", nextAttemptAt: new Date(now.getTime() + 60_000) });
    expect(verdictOf({ statusCode: 503, retryAfterMs: 1_000 }, 2, SCHEDULE, now, () => 0.5)).toEqual({ status: "pending", nextAttemptAt: new Date(now.getTime() + 300_000) });
    expect(verdictOf({ statusCode: 410 }, 1, SCHEDULE, now)).toEqual({ status: "failed", disable: "The endpoint answered 410 Gone." });
  });

  it("disables an endpoint failing for 5 days, not sooner", () => {
    expect(failedTooLong(null, now)).toBe(false);
    expect(failedTooLong(new Date(now.getTime() - 5 * 86_400_000 + 1), now)).toBe(false);
    expect(failedTooLong(new Date(now.getTime() - 5 * 86_400_000), now)).toBe(true);
  });
});

describe("slotFree (§21: at most 10 attempts in flight per endpoint)", () => {
  it("frees a slot nobody holds, or one held past its lease, and nothing else", () => {
    const table: [Parameters<typeof slotFree>[0], boolean][] = [
      [null, true],
      [{ deliveryId: "msg_1.wh_1", leaseUntil: new Date(now.getTime() + 1), claim: "c1" }, false],
      [{ deliveryId: "msg_1.wh_1", leaseUntil: now, claim: "c1" }, true],
      [{ deliveryId: "msg_1.wh_1", leaseUntil: new Date(now.getTime() - 60_000), claim: "c1" }, true],
    ];
    for (const [slot, free] of table) expect([slot, slotFree(slot, now)]).toEqual([slot, free]);
  });
});
