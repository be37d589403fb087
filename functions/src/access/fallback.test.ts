import fc from "fast-check";
import { fallbackUntilOf, fallbackVersionsOf, laterOf, type InvoicePeriod } from "./fallback";

/** Month `k` of a calendar that starts in January 2025 (months of every length, a leap February). */
const month = (k: number) => new Date(Date.UTC(2025, k, 1));
const monthly = (k: number, counts = true): InvoicePeriod => ({ start: month(k), end: month(k + 1), counts });
const yearly = (k: number, counts = true): InvoicePeriod => ({ start: month(k), end: month(k + 12), counts });
const months = (from: number, count: number) => Array.from({ length: count }, (_, index) => monthly(from + index));

describe("fallbackUntilOf (§27)", () => {
  it("gives twelve paid months the start of their run, and eleven nothing", () => {
    expect(fallbackUntilOf(months(0, 12))).toEqual(month(0));
    expect(fallbackUntilOf(months(0, 11))).toBeNull();
  });

  it("gives a yearly invoice its year's start the moment it is paid, and a renewal the next year's", () => {
    expect(fallbackUntilOf([yearly(0)])).toEqual(month(0));
    expect(fallbackUntilOf([yearly(0), yearly(12)])).toEqual(month(12));
  });

  it("moves to the start of the latest run of twelve as months are paid", () => {
    expect(fallbackUntilOf(months(0, 13))).toEqual(month(1));
    expect(fallbackUntilOf(months(0, 24))).toEqual(month(12));
  });

  it("does not count a refunded invoice, which breaks the run it was in", () => {
    const history = months(0, 12);
    history[5] = monthly(5, false);
    expect(fallbackUntilOf(history)).toBeNull();
    expect(fallbackUntilOf([yearly(0, false)])).toBeNull();
    // Twelve more paid months after the refunded one make a run of their own.
    expect(fallbackUntilOf([...history, ...months(12, 6)])).toEqual(month(6));
  });

  it("keeps a run whole across Stripe's month ends (anchored on the 31st) and breaks it on a gap of more than a day", () => {
    const anchoredOn31 = (k: number) => new Date(Date.UTC(2025, k, Math.min(31, new Date(Date.UTC(2025, k + 1, 0)).getUTCDate())));
    const anchored = Array.from({ length: 12 }, (_, k) => ({ start: anchoredOn31(k), end: anchoredOn31(k + 1), counts: true }));
    expect(anchored[1].start).toEqual(new Date(Date.UTC(2025, 1, 28)));
    expect(fallbackUntilOf(anchored)).toEqual(anchoredOn31(0));
    const gap = months(0, 12).map((invoice, index) => (index >= 6 ? { ...invoice, start: new Date(invoice.start.getTime() + 2 * 86_400_000) } : invoice));
    expect(fallbackUntilOf(gap)).toBeNull();
  });

  /** A random history on the month grid: monthly and yearly invoices, some refunded. */
  const history = fc.array(
    fc.record({ start: fc.nat(36), yearly: fc.boolean(), paid: fc.boolean() }).map(({ start, yearly: isYearly, paid }) => (isYearly ? yearly(start, paid) : monthly(start, paid))),
    { maxLength: 40 },
  );

  /** §27 read literally: the latest paid invoice's start from which every one of the next twelve months is paid for. */
  const literal = (invoices: InvoicePeriod[]): Date | null => {
    const covered = (m: number) => invoices.some((invoice) => invoice.counts && invoice.start.getTime() <= month(m).getTime() && invoice.end.getTime() >= month(m + 1).getTime());
    const starts = invoices.filter((invoice) => invoice.counts).map((invoice) => invoice.start.getTime());
    const earned = starts.filter((start) => {
      const k = (new Date(start).getUTCFullYear() - 2025) * 12 + new Date(start).getUTCMonth();
      return Array.from({ length: 12 }, (_, offset) => covered(k + offset)).every(Boolean);
    });
    return earned.length === 0 ? null : new Date(Math.max(...earned));
  };

  it("agrees with a literal reading of the rule over random histories", () => {
    fc.assert(fc.property(history, (invoices) => expect(fallbackUntilOf(invoices)).toEqual(literal(invoices))), { numRuns: 2_000 });
  });

  it("does not depend on the order the invoices came in", () => {
    fc.assert(fc.property(history.chain((invoices) => fc.tuple(fc.constant(invoices), fc.shuffledSubarray(invoices, { minLength: invoices.length, maxLength: invoices.length }))), ([invoices, shuffled]) => expect(fallbackUntilOf(shuffled)).toEqual(fallbackUntilOf(invoices))));
  });

  it("never counts a refunded invoice: the answer is the same without it, and refunding one never moves it later", () => {
    fc.assert(
      fc.property(history, fc.nat(), (invoices, pick) => {
        expect(fallbackUntilOf(invoices)).toEqual(fallbackUntilOf(invoices.filter((invoice) => invoice.counts)));
        if (invoices.length === 0) return;
        const refunded = invoices.map((invoice, index) => (index === pick % invoices.length ? { ...invoice, counts: false } : invoice));
        const before = fallbackUntilOf(invoices);
        const after = fallbackUntilOf(refunded);
        expect(after === null || (before !== null && after.getTime() <= before.getTime())).toBe(true);
      }),
      { numRuns: 1_000 },
    );
  });

  it("never moves backward as invoices are paid and refunded in any order", () => {
    const events = fc.array(fc.record({ invoice: fc.nat(39), refund: fc.boolean() }), { maxLength: 60 });
    fc.assert(
      fc.property(history, events, (invoices, happenings) => {
        // Invoices arrive unpaid-unknown; each event pays one (or refunds it); fallbackUntil is kept as the service keeps it.
        const known = new Map<number, InvoicePeriod>();
        let stored: Date | null = null;
        for (const { invoice, refund } of happenings) {
          if (invoices.length === 0) break;
          const index = invoice % invoices.length;
          known.set(index, { ...invoices[index], counts: !refund && (known.get(index)?.counts ?? true) });
          const next = laterOf(stored, fallbackUntilOf([...known.values()]));
          if (stored !== null) expect(next!.getTime()).toBeGreaterThanOrEqual(stored.getTime());
          stored = next;
        }
      }),
      { numRuns: 1_000 },
    );
  });
});

describe("fallbackVersionsOf (§27)", () => {
  const until = new Date(Date.UTC(2026, 0, 1));
  const at = (days: number) => new Date(until.getTime() + days * 86_400_000);
  const entry = (version: string, publishedAt: Date | null, extra: { yanked?: boolean; revoked?: boolean } = {}) => ({ version, publishedAt, yanked: extra.yanked ?? false, revoked: extra.revoked ?? false });

  it("keeps what was published on or before the date and the later bug fixes of the newest of those", () => {
    const versions = [entry("1.0.0", at(-200)), entry("1.1.0", at(-10)), entry("1.1.1", at(0)), entry("1.1.2", at(30)), entry("1.2.0", at(40)), entry("2.0.0", at(50)), entry("1.0.5", at(60))];
    const fallback = fallbackVersionsOf(versions, until);
    expect(versions.filter((version) => fallback.allows(version.version)).map((version) => version.version)).toEqual(["1.0.0", "1.1.0", "1.1.1", "1.1.2"]);
    expect(fallback.newest).toBe("1.1.2");
    expect(fallback.allows("9.9.9")).toBe(false);
  });

  it("offers no yanked or revoked version as the newest; a revoked version still decides the bug-fix line (§27 \"Edges\")", () => {
    const fallback = fallbackVersionsOf([entry("1.0.0", at(-5)), entry("1.1.0", at(-1), { revoked: true }), entry("1.0.1", at(3), { yanked: true })], until);
    expect(fallback.newest).toBe("1.0.0");
    expect(fallback.allows("1.0.1")).toBe(false);
    // A revoked 2.1.0 keeps 2.1.x the line: its fixes published later are fallback versions, and the newest of them is served.
    const fixed = fallbackVersionsOf([entry("2.0.0", at(-30)), entry("2.1.0", at(-2), { revoked: true }), entry("2.1.1", at(5)), entry("2.2.0", at(9))], until);
    expect([fixed.allows("2.1.1"), fixed.allows("2.2.0"), fixed.newest]).toEqual([true, false, "2.1.1"]);
  });

  it("counts a version published within the second the date falls in as published on it (Stripe's times are whole seconds)", () => {
    expect(fallbackVersionsOf([entry("1.0.0", new Date(until.getTime() + 999))], until).newest).toBe("1.0.0");
    expect(fallbackVersionsOf([entry("1.0.0", new Date(until.getTime() + 1000))], until).newest).toBeNull();
  });

  it("keeps nothing when nothing was published by the date, or publish times are unknown", () => {
    expect(fallbackVersionsOf([entry("1.0.0", at(1)), entry("0.9.0", null)], until)).toMatchObject({ newest: null });
  });
});
