import { decidingGrants, seatCount, drawsOnSubscription, effectiveEntitlements, effectiveSubscriptionStatus, fallbackBound, GRACE_PERIOD_MS, isModuleUsable, purchaseStatus, usingKey, type EntitlementGrant, type PurchaseStatus, type PurchaseTerms } from "./rules";

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
          { businessId: "acme", subscription: subscription("active", -DAY, ["pro", "charts"]), drawsOnSubscription: true },
          { businessId: "globex", subscription: subscription("past_due", GRACE_PERIOD_MS, ["maps"]), drawsOnSubscription: true },
        ],
        purchases: [],
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
          { businessId: "a", subscription: subscription("canceled", -DAY, ["x"]), drawsOnSubscription: true },
          { businessId: "b", subscription: subscription("active", GRACE_PERIOD_MS + 1, ["y"]), drawsOnSubscription: true },
          { businessId: "c", subscription: null, drawsOnSubscription: true },
        ],
        purchases: [],
      },
      now,
    );
    expect(grants).toEqual([]);
  });
});

describe("seats (§17)", () => {
  const at = (minutes: number) => new Date(now.getTime() + minutes * 60_000);
  const holders = [
    { uid: "ann", assignedAt: at(1) },
    { uid: "cid", assignedAt: at(3) },
    { uid: "bob", assignedAt: at(3) },
    { uid: "dee", assignedAt: at(2) },
  ];

  /** The rule as §17 states it, over the whole list: the newest seats beyond the quantity wait. */
  const heldSeats = (list: typeof holders, paid: number) => {
    const newestFirst = [...list].sort((a, b) => b.assignedAt.getTime() - a.assignedAt.getTime() || (a.uid < b.uid ? -1 : 1));
    return new Set(newestFirst.slice(0, Math.max(0, list.length - paid)).map((holder) => holder.uid));
  };
  /** A member's standing as the member store counts it: from the end `seatCount` picks, no further than it says. */
  const standing = (uid: string, paid: number | null, ...others: (number | null)[]) => {
    const mine = holders.find((holder) => holder.uid === uid);
    const before = mine ? holders.filter((other) => other.assignedAt > mine.assignedAt || (other.assignedAt.getTime() === mine.assignedAt.getTime() && other.uid < mine.uid)).length : 0;
    const after = mine ? holders.length - 1 - before : 0;
    const base = { seat: Boolean(mine), seatsUsed: holders.length, holdersBefore: 0 };
    const { newer, older } = seatCount(Boolean(mine), holders.length, [paid, ...others]);
    return { ...base, holdersBefore: Math.min(before, newer), ...(older > 0 ? { holdersAfter: { count: Math.min(after, older), countedTo: older } } : {}) };
  };

  it("holds back the newest seats beyond the paid quantity, newest first, then by uid, counting no further than it must", () => {
    expect(heldSeats(holders, 3)).toEqual(new Set(["bob"]));
    expect(heldSeats(holders, 2)).toEqual(new Set(["bob", "cid"]));
    for (const paid of [0, 1, 2, 3, 4, 9]) {
      for (const { uid } of holders) expect({ uid, paid, draws: drawsOnSubscription(standing(uid, paid), paid) }).toEqual({ uid, paid, draws: !heldSeats(holders, paid).has(uid) });
      // Decided together with another quantity (a subscription and a business purchase), each counted from its cheaper end.
      for (const other of [1, 3]) {
        for (const { uid } of holders) {
          const both = standing(uid, paid, other);
          expect({ uid, paid, other, draws: [drawsOnSubscription(both, paid), drawsOnSubscription(both, other)] }).toEqual({ uid, paid, other, draws: [!heldSeats(holders, paid).has(uid), !heldSeats(holders, other).has(uid)] });
        }
      }
    }
    // A quantity that covers every seat counts nothing; a small one counts the older seats, a large one the newer.
    expect(seatCount(true, 4, [9])).toEqual({ newer: 0, older: 0 });
    expect(seatCount(true, 4, [1])).toEqual({ newer: 0, older: 1 });
    expect(seatCount(true, 4, [3])).toEqual({ newer: 1, older: 0 });
    // A 1-seat purchase and a subscription of 99,990 in a business of 100,000: one entry and ten.
    expect(seatCount(true, 100_000, [1, 99_990, null])).toEqual({ newer: 10, older: 1 });
    expect(seatCount(false, 4, [1])).toEqual({ newer: 0, older: 0 });
  });

  it("lets a subscription reach every member when it counts no seats, else only holders of a seat not held back", () => {
    expect(drawsOnSubscription(standing("eve", null), null)).toBe(true);
    expect(drawsOnSubscription(standing("eve", 10), 10)).toBe(false);
    expect(drawsOnSubscription(standing("ann", 1), 1)).toBe(true);
    expect(drawsOnSubscription(standing("dee", 1), 1)).toBe(false);
  });

  it("grants nothing from a subscription the member does not draw on", () => {
    const grants = effectiveEntitlements(
      { direct: [], memberships: [{ businessId: "acme", subscription: { status: "active", currentPeriodEnd: at(60), entitlements: ["pro"] }, drawsOnSubscription: false }], purchases: [] },
      now,
    );
    expect(grants).toEqual([]);
  });

  it("grants module:<id> for each purchase that is live and reaches the user", () => {
    const purchase = (purchaseId: string, status: PurchaseStatus, periodEndAgo: number | null, extra: Partial<PurchaseTerms> = {}): PurchaseTerms => ({
      purchaseId,
      moduleId: `acme.${purchaseId}`,
      status,
      currentPeriodEnd: periodEndAgo === null ? null : ago(periodEndAgo),
      reachesUser: true,
      ...extra,
    });
    const grants = effectiveEntitlements(
      {
        direct: [],
        memberships: [],
        purchases: [
          purchase("once", "active", null),
          purchase("monthly", "past_due", GRACE_PERIOD_MS),
          purchase("trial", "trialing", -DAY, { businessId: "acme" }),
          purchase("lapsed", "active", GRACE_PERIOD_MS + 1),
          purchase("refunded", "refunded", null),
          purchase("disputed", "disputed", null),
          purchase("revoked", "revoked", null),
          purchase("seatless", "active", null, { businessId: "acme", reachesUser: false }),
        ],
      },
      now,
    );
    expect(grants).toEqual([
      { key: "module:acme.once", source: "purchase", purchaseId: "once" },
      { key: "module:acme.monthly", source: "purchase", purchaseId: "monthly" },
      { key: "module:acme.trial", source: "purchase", purchaseId: "trial", businessId: "acme" },
    ]);
  });
});

describe("fallback grants (§27)", () => {
  const until = new Date(now.getTime() - 400 * DAY);
  const purchase = (purchaseId: string, status: PurchaseStatus, extra: Partial<PurchaseTerms> = {}): PurchaseTerms => ({ purchaseId, moduleId: "acme.charts", status, currentPeriodEnd: ago(10 * DAY), reachesUser: true, ...extra });

  it("lists a fallback, not a purchase, once a subscription with a fallback date no longer grants access", () => {
    const grants = effectiveEntitlements({ direct: [], memberships: [], purchases: [purchase("ended", "canceled", { fallbackUntil: until }), purchase("none", "canceled"), purchase("live", "active", { moduleId: "acme.maps", currentPeriodEnd: ago(-DAY), fallbackUntil: until })] }, now);
    expect(grants).toEqual([
      { key: "module:acme.charts", source: "fallback", purchaseId: "ended", fallbackUntil: until },
      { key: "module:acme.maps", source: "purchase", purchaseId: "live" },
    ]);
  });

  it("bounds a module by its latest fallback date only while no other key it accepts is held", () => {
    const module = { id: "acme.charts", entitlement: "pro", price: { amount: 500 } };
    const later = new Date(until.getTime() + DAY);
    const fallbacks: EntitlementGrant[] = [
      { key: "module:acme.charts", source: "fallback", purchaseId: "a", fallbackUntil: until },
      { key: "module:acme.charts", source: "fallback", purchaseId: "b", fallbackUntil: later },
    ];
    expect(fallbackBound(module, fallbacks)).toEqual(later);
    expect(fallbackBound(module, [...fallbacks, { key: "pro", source: "direct" }])).toBeNull();
    expect(fallbackBound(module, [...fallbacks, { key: "module:acme.charts", source: "purchase", purchaseId: "c" }])).toBeNull();
    expect(fallbackBound({ id: "acme.charts" }, fallbacks)).toBeNull();
    expect(fallbackBound(module, [])).toBeNull();
  });

  it("lets a fallback decide a key only when nothing else grants it", () => {
    const kept: EntitlementGrant = { key: "module:acme.charts", source: "fallback", purchaseId: "a", fallbackUntil: until };
    const live: EntitlementGrant = { key: "module:acme.charts", source: "purchase", purchaseId: "b" };
    expect(decidingGrants([kept], "module:acme.charts")).toEqual([kept]);
    expect(decidingGrants([kept, live, { key: "pro", source: "direct" }], "module:acme.charts")).toEqual([live]);
    expect(decidingGrants([kept], "pro")).toEqual([]);
  });
});

describe("isModuleUsable", () => {
  it("allows free modules to everyone and paid ones to holders of their entitlement", () => {
    expect(isModuleUsable({ id: "a.b" }, new Set())).toBe(true);
    expect(isModuleUsable({ id: "a.b", entitlement: null }, new Set())).toBe(true);
    expect(isModuleUsable({ id: "a.b", entitlement: "pro" }, new Set(["pro"]))).toBe(true);
    expect(isModuleUsable({ id: "a.b", entitlement: "pro" }, new Set(["beta"]))).toBe(false);
  });

  it("lets a priced module be used through its purchase, or its entitlement where it has one", () => {
    expect(isModuleUsable({ id: "a.b", price: { amount: 500 } }, new Set())).toBe(false);
    expect(isModuleUsable({ id: "a.b", price: { amount: 500 } }, new Set(["module:a.b"]))).toBe(true);
    expect(isModuleUsable({ id: "a.b", price: { amount: 500 } }, new Set(["module:a.c", "pro"]))).toBe(false);
    expect(isModuleUsable({ id: "a.b", entitlement: "pro", price: { amount: 500 } }, new Set(["pro"]))).toBe(true);
    expect(usingKey({ id: "a.b", entitlement: "pro", price: { amount: 500 } }, new Set(["pro", "module:a.b"]))).toBe("module:a.b");
    expect(usingKey({ id: "a.b" }, new Set())).toBeNull();
  });
});

describe("purchaseStatus (§20)", () => {
  it("follows refunds and disputes for a one-time purchase, and only Stripe's status for a subscription", () => {
    const table: [Parameters<typeof purchaseStatus>[0], PurchaseStatus][] = [
      [{ model: "one_time", baseStatus: "active", refunded: false, dispute: null }, "active"],
      [{ model: "one_time", baseStatus: "active", refunded: true, dispute: null }, "refunded"],
      [{ model: "one_time", baseStatus: "active", refunded: false, dispute: "open" }, "disputed"],
      [{ model: "one_time", baseStatus: "active", refunded: false, dispute: "won" }, "active"],
      [{ model: "one_time", baseStatus: "active", refunded: true, dispute: "open" }, "refunded"],
      [{ model: "one_time", baseStatus: "active", refunded: true, dispute: "lost" }, "revoked"],
      [{ model: "subscription", baseStatus: "active", refunded: true, dispute: "lost" }, "active"],
      [{ model: "subscription", baseStatus: "past_due", refunded: true, dispute: "open" }, "past_due"],
      [{ model: "subscription", baseStatus: "canceled", refunded: false, dispute: null }, "canceled"],
    ];
    for (const [facts, status] of table) expect([facts, purchaseStatus(facts)]).toEqual([facts, status]);
  });
});
