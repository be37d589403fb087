import { loginWindow, retryAfterSeconds } from "./login-limit";

const limit = { maxFailures: 3, windowMs: 15 * 60 * 1000 };

describe("the per-account login limit", () => {
  const now = new Date("2026-11-22T10:05:00.000Z");

  it("counts one account in one fixed window, whatever the email's case or spaces", () => {
    const window = loginWindow(" Dev@Example.com ", limit, now);
    expect(window).toEqual(loginWindow("dev@example.com", limit, new Date("2026-11-22T10:14:59.999Z")));
    expect(window.endsAt.toISOString()).toBe("2026-11-22T10:15:00.000Z");
    expect(window.key).not.toContain("example");
    expect(loginWindow("dev@example.com", limit, new Date("2026-11-22T10:15:00.000Z")).key).not.toBe(window.key);
    expect(loginWindow("other@example.com", limit, now).key).not.toBe(window.key);
  });

  it("lets an account try until it has failed maxFailures times, then until the window ends", () => {
    const window = loginWindow("dev@example.com", limit, now);
    expect(retryAfterSeconds(0, window, limit, now)).toBeNull();
    expect(retryAfterSeconds(2, window, limit, now)).toBeNull();
    expect(retryAfterSeconds(3, window, limit, now)).toBe(600);
    expect(retryAfterSeconds(50, window, limit, new Date("2026-11-22T10:14:59.900Z"))).toBe(1);
  });
});
