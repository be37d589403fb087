import { effectiveEntitlements, effectiveSubscriptionStatus, GRACE_PERIOD_MS, isModuleUsable } from "./rules";

const now = new Date("2026-06-15T12:00:00.000Z");
const ago = (ms: number) => new Date(now.getTime() - ms);
const DAY = 24 * 60 * 60 * 1000;

describe("effectiveSubscriptionStatus", () => {
  it.each(["active", "trialing", "past_due"] as const)("keeps %s until 3 days after the period end", (status) => {
    expect(effectiveSubscriptionStatus({ status, currentPeriodEnd: ago(-DAY) }, now)).toBe(status);
    expect(effectiveSubscriptionStatus({ status, currentPeriodEnd: ago(2 * DAY) }, now)).toBe(status);
    expect(effectiveSubscriptionStatus({ status, currentPeriodEnd: ago(GRACE_PERIOD_MS) }, now)).toBe(status);
  });

  it.each(["active", "trialing", "past_due"] as const)("turns %s into expired more than 3 days after the period end", (status) => {
    expect(effectiveSubscriptionStatus({ status, currentPeriodEnd: ago(GRACE_PERIOD_MS + 1) }, now)).toBe("expired");
    expect(effectiveSubscriptionStatus({ status, currentPeriodEnd: ago(30 * DAY) }, now)).toBe("expired");
  });

  it.each(["canceled", "expired"] as const)("leaves %s as stored, whatever the period end", (status) => {
    expect(effectiveSubscriptionStatus({ status, currentPeriodEnd: ago(-30 * DAY) }, now)).toBe(status);
    expect(effectiveSubscriptionStatus({ status, currentPeriodEnd: ago(30 * DAY) }, now)).toBe(status);
  });
});

describe("effectiveEntitlements", () => {
  const subscription = (status: "active" | "canceled" | "past_due", periodEndAgo: number, entitlements: string[]) => ({
    status,
    currentPeriodEnd: ago(periodEndAgo),
    entitlements,
  });

  it("unites direct grants with the entitlements of live subscriptions, naming their sources", () => {
    const grants = effectiveEntitlements(
      {
        direct: ["beta", "pro", "beta"],
        memberships: [
          { businessId: "acme", subscription: subscription("active", -DAY, ["pro", "charts"]) },
          { businessId: "globex", subscription: subscription("past_due", GRACE_PERIOD_MS, ["maps"]) },
        ],
      },
      now,
    );
    expect(grants).toEqual([
      { key: "beta", source: "direct" },
      { key: "pro", source: "direct" },
      { key: "pro", source: "subscription", businessId: "acme" },
      { key: "charts", source: "subscription", businessId: "acme" },
      { key: "maps", source: "subscription", businessId: "globex" },
    ]);
  });

  it("ignores canceled, lapsed-past-grace and missing subscriptions", () => {
    const grants = effectiveEntitlements(
      {
        direct: [],
        memberships: [
          { businessId: "a", subscription: subscription("canceled", -DAY, ["x"]) },
          { businessId: "b", subscription: subscription("active", GRACE_PERIOD_MS + 1, ["y"]) },
          { businessId: "c", subscription: null },
        ],
      },
      now,
    );
    expect(grants).toEqual([]);
  });
});

describe("isModuleUsable", () => {
  it("allows free modules to everyone and paid ones to holders of their entitlement", () => {
    expect(isModuleUsable({}, new Set())).toBe(true);
    expect(isModuleUsable({ entitlement: null }, new Set())).toBe(true);
    expect(isModuleUsable({ entitlement: "pro" }, new Set(["pro"]))).toBe(true);
    expect(isModuleUsable({ entitlement: "pro" }, new Set(["beta"]))).toBe(false);
  });
});
