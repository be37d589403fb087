import fc from "fast-check";
import type { PurchaseStatus } from "../access/rules";
import { completesNow, earnedFallback, earningsOf, feeOf, purchaseFacts, refundedFee, unannouncedRefund } from "./rules";

describe("feeOf", () => {
  it("is amount × quantity × percent / 100, rounded half up", () => {
    expect(feeOf(1000, 1, 1500)).toBe(150);
    expect(feeOf(999, 1, 1500)).toBe(150); // 149.85
    expect(feeOf(990, 1, 1500)).toBe(149); // 148.5 → 149
    expect(feeOf(101, 3, 1250)).toBe(38); // 37.875
    expect(feeOf(100, 1, 0)).toBe(0);
    expect(feeOf(1_000_000, 10_000, 10_000)).toBe(10_000_000_000);
  });

  it("never exceeds the amount and is exact in integers", () => {
    fc.assert(
      fc.property(fc.integer({ min: 100, max: 1_000_000 }), fc.integer({ min: 1, max: 10_000 }), fc.integer({ min: 0, max: 10_000 }), (amount, quantity, basisPoints) => {
        const fee = feeOf(amount, quantity, basisPoints);
        expect(Number.isSafeInteger(fee)).toBe(true);
        expect(fee).toBeLessThanOrEqual(amount * quantity);
        expect(Math.abs(fee - (amount * quantity * basisPoints) / 10_000)).toBeLessThanOrEqual(0.5);
      }),
    );
  });
});

describe("refundedFee", () => {
  it("gives the fee back in proportion to the refund", () => {
    expect(refundedFee(150, 1000, 1000)).toBe(150);
    expect(refundedFee(150, 1000, 500)).toBe(75);
    expect(refundedFee(150, 1000, 1)).toBe(0);
    expect(refundedFee(150, 1000, 5000)).toBe(150);
  });
});

describe("earningsOf", () => {
  const sale = (moduleId: string, currency: string, amount: number, fee: number, refunded = 0, lost = false) => ({
    sale: { moduleId, currency, amount, fee },
    refund: refunded ? { refunded } : null,
    dispute: lost ? { state: "lost" as const, amount } : null,
  });

  it("counts sales, gross, fees kept after refunds, refunds and net per currency and module", () => {
    const earnings = earningsOf([sale("a.x", "usd", 1000, 150), sale("a.x", "usd", 1000, 150, 1000), sale("a.y", "usd", 1000, 150, 500), sale("a.x", "eur", 2000, 300, 0, true)]);
    expect(earnings.totals).toEqual([
      { currency: "eur", sales: 1, gross: 2000, fees: 300, refunds: 2000, net: -300 },
      { currency: "usd", sales: 3, gross: 3000, fees: 225, refunds: 1500, net: 1275 },
    ]);
    expect(earnings.modules.map((row) => [row.currency, row.moduleId, row.net])).toEqual([
      ["eur", "a.x", -300],
      ["usd", "a.x", 850],
      ["usd", "a.y", 425],
    ]);
  });

  it("keeps the fee Stripe reports it gave back with a refund, and a proportional share only for lines recorded before that was read", () => {
    const refunded = (feeRefunded: number | null) => ({ sale: { moduleId: "a.x", currency: "usd", amount: 1000, fee: 150 }, refund: { refunded: 500, feeRefunded }, dispute: null });
    expect(earningsOf([refunded(80)]).totals[0]).toMatchObject({ fees: 70, refunds: 500, net: 430 });
    expect(earningsOf([refunded(0)]).totals[0]).toMatchObject({ fees: 150, net: 350 });
    expect(earningsOf([refunded(null)]).totals[0]).toMatchObject({ fees: 75, net: 425 });
    expect(earningsOf([refunded(999)]).totals[0]).toMatchObject({ fees: 0 });
  });

  it("does not depend on the order of the sales", () => {
    const lines = fc.array(fc.record({ moduleId: fc.constantFrom("a.x", "a.y"), currency: fc.constantFrom("usd", "eur"), amount: fc.integer({ min: 100, max: 10_000 }), refunded: fc.integer({ min: 0, max: 10_000 }) }), { maxLength: 30 });
    fc.assert(
      fc.property(lines, fc.infiniteStream(fc.nat()), (items, order) => {
        const sales = items.map((item) => sale(item.moduleId, item.currency, item.amount, feeOf(item.amount, 1, 1500), Math.min(item.refunded, item.amount)));
        const shuffled = [...sales].sort(() => (order.next().value % 3) - 1);
        expect(earningsOf(shuffled)).toEqual(earningsOf(sales));
      }),
    );
  });
});

describe("purchaseFacts, completesNow and unannouncedRefund", () => {
  const sale = (amount: number) => ({ amount });
  it("calls a purchase refunded only when one of its charges was refunded in full, and weighs disputes lost > open > won", () => {
    const table: [Parameters<typeof purchaseFacts>[0], ReturnType<typeof purchaseFacts>][] = [
      [[], { refunded: false, dispute: null }],
      [[{ sale: sale(1000), refund: { refunded: 999 }, dispute: null }], { refunded: false, dispute: null }],
      [[{ sale: sale(1000), refund: { refunded: 1000 }, dispute: null }], { refunded: true, dispute: null }],
      [[{ sale: sale(0), refund: { refunded: 0 }, dispute: null }], { refunded: false, dispute: null }],
      [[{ sale: sale(500), refund: null, dispute: { state: "won" } }, { sale: sale(500), refund: null, dispute: { state: "open" } }], { refunded: false, dispute: "open" }],
      [[{ sale: sale(500), refund: null, dispute: { state: "open" } }, { sale: sale(500), refund: null, dispute: { state: "lost" } }], { refunded: false, dispute: "lost" }],
    ];
    for (const [lines, facts] of table) expect(purchaseFacts(lines)).toEqual(facts);
  });

  it("completes a purchase once: a one-time purchase when paid, a subscription when Stripe first calls it active", () => {
    const table: [Date | null, "one_time" | "subscription", PurchaseStatus, boolean][] = [
      [null, "one_time", "active", true],
      [new Date(0), "one_time", "active", false],
      [null, "subscription", "active", true],
      [null, "subscription", "trialing", false],
      [null, "subscription", "past_due", false],
      [null, "subscription", "expired", false],
      [new Date(0), "subscription", "active", false],
    ];
    for (const [completedAt, model, status, expected] of table) expect([model, status, completedAt, completesNow(completedAt, model, status)]).toEqual([model, status, completedAt, expected]);
  });

  it("announces what was refunded beyond what was announced, never a negative amount", () => {
    expect(unannouncedRefund(null)).toBe(0);
    expect(unannouncedRefund({ refunded: 300, announced: 0 })).toBe(300);
    expect(unannouncedRefund({ refunded: 1000, announced: 300 })).toBe(700);
    expect(unannouncedRefund({ refunded: 300, announced: 300 })).toBe(0);
    expect(unannouncedRefund({ refunded: 300, announced: 1000 })).toBe(0);
  });
});

describe("earnedFallback (§27, with its edges)", () => {
  const month = (k: number) => new Date(Date.UTC(2025, k, 1));
  type Line = Parameters<typeof earnedFallback>[1][number];
  /** Month k's invoice: paid on a price with the promise unless said otherwise. */
  const invoice = (k: number, options: { amount?: number; promise?: "none" | "perpetual" | undefined; refunded?: number; lost?: boolean } = {}): Line => {
    const amount = options.amount ?? 500;
    return {
      sale: { amount, period: { start: month(k), end: month(k + 1) }, ...("promise" in options ? (options.promise ? { fallback: options.promise } : {}) : { fallback: "perpetual" as const }) },
      refund: options.refunded === undefined ? null : { refunded: options.refunded },
      dispute: options.lost ? { state: "lost" } : null,
    };
  };
  const run = (from: number, count: number, options: Parameters<typeof invoice>[1] = {}) => Array.from({ length: count }, (_, index) => invoice(from + index, options));
  const perpetual = { fallback: "perpetual" as const, fallbackUntil: null };

  it.each([
    ["twelve paid months on a price with the promise", run(0, 12), month(0)],
    ["eleven", run(0, 11), null],
    ["twelve months without the promise, then one with it (a price switch): not one year of the promise", [...run(0, 12, { promise: "none" }), invoice(12)], null],
    ["twelve without, then twelve with: the run starts at the switch", [...run(0, 12, { promise: "none" }), ...run(12, 12)], month(12)],
    ["a month without the promise inside a run breaks it", [...run(0, 6), invoice(6, { promise: "none" }), ...run(7, 5)], null],
    ["a month paid by credit balance or a 100% coupon (amount 0) counts", [...run(0, 5), invoice(5, { amount: 0 }), ...run(6, 6)], month(0)],
    ["a month refunded in full breaks the run; a partial refund does not", [...run(0, 5), invoice(5, { refunded: 500 }), ...run(6, 6)], null],
    ["a partial refund leaves the month paid", [...run(0, 5), invoice(5, { refunded: 200 }), ...run(6, 6)], month(0)],
    ["a lost dispute breaks it", [...run(0, 5), invoice(5, { lost: true }), ...run(6, 6)], null],
    // A trial's invoice bills nothing and is never recorded: the first paid month starts the run.
    ["after a trial, twelve paid months", run(1, 12), month(1)],
    ["lines recorded before the promise was kept per invoice take the purchase's", run(0, 12, { promise: undefined }), month(0)],
  ])("%s", (_name, lines, expected) => {
    expect(earnedFallback(perpetual, lines as Line[])).toEqual(expected);
  });

  it("earns nothing for a purchase whose price never promised a fallback, and keeps what was stored", () => {
    expect(earnedFallback({ fallback: "none", fallbackUntil: null }, run(0, 12, { promise: "none" }))).toBeNull();
    expect(earnedFallback({ fallback: "perpetual", fallbackUntil: month(3) }, run(0, 12))).toEqual(month(3));
  });

  /** §27 read literally, edges included: the latest start of a counting month from which twelve months in a row count. */
  const literal = (lines: Line[]): Date | null => {
    const counts = (k: number) =>
      lines.some((line) => {
        const paid = !(line.refund !== null && line.sale.amount > 0 && line.refund.refunded >= line.sale.amount) && line.dispute?.state !== "lost";
        return paid && (line.sale.fallback ?? "perpetual") === "perpetual" && line.sale.period!.start.getTime() === month(k).getTime();
      });
    const earned = Array.from({ length: 48 }, (_, k) => k).filter((k) => Array.from({ length: 12 }, (_, offset) => counts(k + offset)).every(Boolean));
    return earned.length === 0 ? null : month(Math.max(...earned));
  };

  it("agrees with the literal reading over random histories of promised and unpromised, charged, credited, refunded and disputed months", () => {
    const line = fc
      .record({
        k: fc.nat(36),
        amount: fc.constantFrom(0, 500),
        promise: fc.constantFrom<"none" | "perpetual" | undefined>("none", "perpetual", "perpetual", undefined),
        refund: fc.constantFrom<number | undefined>(undefined, undefined, 200, 500),
        lost: fc.constantFrom(false, false, false, false, true),
      })
      .map(({ k, amount, promise, refund, lost }) => invoice(k, { amount, promise, refunded: amount > 0 ? refund : undefined, lost }));
    fc.assert(fc.property(fc.array(line, { maxLength: 48 }), (lines) => expect(earnedFallback(perpetual, lines)).toEqual(literal(lines))), { numRuns: 1_000 });
  });
});
