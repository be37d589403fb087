import { dailyStats, daysOf, MAX_STATS_DAYS, statsRange } from "./stats";

describe("download statistics", () => {
  const now = new Date("2026-03-10T23:59:59Z");

  it("covers the last 30 days ending today (UTC) by default, and what is asked otherwise", () => {
    expect(statsRange({}, now)).toEqual({ from: "2026-02-09", to: "2026-03-10" });
    expect(statsRange({ to: "2026-03-03" }, now)).toEqual({ from: "2026-02-02", to: "2026-03-03" });
    expect(statsRange({ from: "2026-03-01", to: "2026-03-01" }, now)).toEqual({ from: "2026-03-01", to: "2026-03-01" });
  });

  it("refuses a range that ends before it starts or spans more than 366 days, naming the field", () => {
    expect(() => statsRange({ from: "2026-03-04", to: "2026-03-03" }, now)).toThrow(expect.objectContaining({ code: "invalid_request", errors: [expect.objectContaining({ path: "from" })] }));
    expect(() => statsRange({ from: "2025-03-02", to: "2026-03-03" }, now)).toThrow(expect.objectContaining({ code: "invalid_request" }));
    expect(daysOf(statsRange({ from: "2025-03-03", to: "2026-03-03" }, now))).toHaveLength(MAX_STATS_DAYS);
  });

  it("lists every day in order across month and year ends", () => {
    expect(daysOf({ from: "2025-12-30", to: "2026-01-02" })).toEqual(["2025-12-30", "2025-12-31", "2026-01-01", "2026-01-02"]);
    expect(daysOf({ from: "2028-02-28", to: "2028-03-01" })).toEqual(["2028-02-28", "2028-02-29", "2028-03-01"]);
  });

  it("answers every day of the range, zeros included, with the total", () => {
    const counted = new Map<string, { downloads: number; versions: Record<string, number> }>([
      ["2026-03-01", { downloads: 3, versions: { "1.0.0": 2, "1.1.0": 1 } }],
      ["2026-03-03", { downloads: 1, versions: { "1.1.0": 1 } }],
      ["2026-03-09", { downloads: 50, versions: { "1.1.0": 50 } }],
    ]);
    expect(dailyStats("acme.charts", { from: "2026-03-01", to: "2026-03-03" }, counted)).toEqual({
      moduleId: "acme.charts",
      from: "2026-03-01",
      to: "2026-03-03",
      total: 4,
      days: [
        { date: "2026-03-01", downloads: 3, versions: { "1.0.0": 2, "1.1.0": 1 } },
        { date: "2026-03-02", downloads: 0, versions: {} },
        { date: "2026-03-03", downloads: 1, versions: { "1.1.0": 1 } },
      ],
    });
  });
});
