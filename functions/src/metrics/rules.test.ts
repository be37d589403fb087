import fc from "fast-check";
import { activityCounts, removalCounts } from "./counting";
import { bucketOf, csvOf, daysFrom, MAX_SERIES, monthsBetween, newlyActiveDays, OTHER, seriesOf, type DayCell, type Metric } from "./rules";

describe("days, buckets and months (§28)", () => {
  it("starts weeks on Monday and months on their first day", () => {
    expect(bucketOf("2026-11-28", "week")).toBe("2026-11-23");
    expect(bucketOf("2026-11-23", "week")).toBe("2026-11-23");
    expect(bucketOf("2026-11-22", "week")).toBe("2026-11-16");
    expect(bucketOf("2026-11-28", "month")).toBe("2026-11-01");
    expect(monthsBetween("2024-11-15", "2026-11-02")).toHaveLength(25);
    expect(monthsBetween("2026-01-31", "2026-02-01")).toEqual(["2026-01", "2026-02"]);
  });
});

describe("active devices (§28)", () => {
  it("counts a device on the day it is seen and the 29 after, once however often it is seen", () => {
    expect(newlyActiveDays(null, "2026-11-01")).toEqual(daysFrom("2026-11-01", "2026-11-30"));
    expect(newlyActiveDays("2026-11-01", "2026-11-01")).toEqual([]);
    expect(newlyActiveDays("2026-11-01", "2026-11-05")).toEqual(daysFrom("2026-12-01", "2026-12-04"));
    expect(newlyActiveDays("2026-10-01", "2026-11-05")).toEqual(daysFrom("2026-11-05", "2026-12-04"));
  });

  it("moves the days ahead to a new version, and takes them away on removal", () => {
    const first = activityCounts(null, { moduleId: "a.b", version: "1.0.0", platform: "linux", today: "2026-11-01" });
    const next = activityCounts(first.activity, { moduleId: "a.b", version: "1.1.0", platform: undefined, today: "2026-11-03" });
    expect(next.activity).toEqual({ moduleId: "a.b", lastDay: "2026-11-03", version: "1.1.0", platform: "linux" });
    const totals = next.counts.filter((count) => !count.onlySplits).reduce((sum, count) => sum + count.amount, 0);
    expect(totals).toBe(2);
    expect(next.counts.filter((count) => count.onlySplits && count.version === "1.0.0")).toHaveLength(28);
    const removed = removalCounts(next.activity, "2026-11-10");
    expect(removed.counts.map((count) => count.day)).toEqual(daysFrom("2026-11-10", "2026-12-02"));
    expect(removed.activity?.lastDay).toBeNull();
  });
});

describe("series, totals and CSV (§28)", () => {
  const metrics: Metric[] = ["downloads", "activeDevices", "revenue"];
  const cellArbitrary = fc.record({
    downloads: fc.record({ v1: fc.nat(50), v2: fc.nat(50), rest: fc.nat(5) }),
    activeDevices: fc.nat(100),
    revenue: fc.record({ usd: fc.nat(10_000), eur: fc.nat(10_000) }),
  });
  const days = daysFrom("2026-01-26", "2026-03-03");

  it("sums buckets, keeps activeDevices' last day, and writes CSV whose columns sum to the totals, split or not", () => {
    fc.assert(
      fc.property(fc.array(cellArbitrary, { minLength: days.length, maxLength: days.length }), fc.constantFrom("day", "week", "month" as const), fc.constantFrom(undefined, "version" as const), (generated, interval, split) => {
        const cells = new Map(days.map((day, index) => [day, generated[index]]));
        const cellOf = (day: string, metric: Metric): DayCell | undefined => {
          const cell = cells.get(day)!;
          if (metric === "downloads") return { total: cell.downloads.v1 + cell.downloads.v2 + cell.downloads.rest, version: { "1.0.0": cell.downloads.v1, "2.0.0": cell.downloads.v2 } };
          if (metric === "activeDevices") return { total: cell.activeDevices };
          return { total: cell.revenue };
        };
        const query = { from: days[0], to: days.at(-1)!, interval, metrics, split };
        const result = seriesOf(cellOf, query);
        const downloads = generated.reduce((sum, cell) => sum + cell.downloads.v1 + cell.downloads.v2 + cell.downloads.rest, 0);
        expect(result.totals.downloads).toBe(downloads);
        expect(result.totals.activeDevices).toBe(generated.at(-1)!.activeDevices);
        expect(result.totals.revenue).toEqual({ usd: generated.reduce((sum, cell) => sum + cell.revenue.usd, 0), eur: generated.reduce((sum, cell) => sum + cell.revenue.eur, 0) });
        const [header, ...rows] = csvOf(result, query, ["usd"]).trimEnd().split("\r\n").map((line) => line.split(","));
        const column = (name: string) => rows.reduce((sum, row) => sum + Number(row[header.indexOf(name)]), 0);
        expect([column("downloads"), column("revenue_usd"), column("revenue_eur")]).toEqual([downloads, (result.totals.revenue as Record<string, number>).usd, (result.totals.revenue as Record<string, number>).eur]);
        expect(new Set(rows.map((row) => row[0])).size).toBe(result.series[0].points.length);
      }),
      { numRuns: 200 },
    );
  });

  it("answers at most 20 series per metric: the 19 largest by total, then the rest summed as other, whose sums stay whole", () => {
    fc.assert(
      fc.property(fc.array(fc.nat(40), { minLength: 1, maxLength: 60 }), fc.constantFrom<Metric>("downloads", "activeDevices"), (perVersion, metric) => {
        const versions = perVersion.map((_, index) => `1.${index}.0`);
        const cellOf = (_day: string, asked: Metric): DayCell | undefined =>
          asked === metric ? { total: perVersion.reduce((sum, n) => sum + n, 0), version: Object.fromEntries(versions.map((version, index) => [version, perVersion[index]])) } : undefined;
        const query = { from: "2026-03-01", to: "2026-03-03", interval: "day" as const, metrics: [metric], split: "version" as const };
        const { series, totals } = seriesOf(cellOf, query);
        const named = versions.filter((_, index) => perVersion[index] !== 0);
        expect(series.length).toBe(Math.min(Math.max(named.length, 1), MAX_SERIES));
        // Every day's values still add up to that day's total, other included.
        for (const index of [0, 1, 2]) expect(series.reduce((sum, entry) => sum + (entry.points[index].value as number), 0)).toBe(perVersion.reduce((sum, n) => sum + n, 0));
        if (named.length > MAX_SERIES) {
          expect(series.at(-1)!.split).toBe(OTHER);
          const kept = series.slice(0, -1).map((entry) => perVersion[versions.indexOf(entry.split!)]);
          const dropped = named.filter((version) => !series.some((entry) => entry.split === version)).map((version) => perVersion[versions.indexOf(version)]);
          expect(Math.min(...kept)).toBeGreaterThanOrEqual(Math.max(...dropped));
        }
        const csvRows = csvOf({ series }, query, []).trimEnd().split("\r\n").slice(1);
        expect(csvRows.reduce((sum, row) => sum + Number(row.split(",")[2]), 0)).toBe(metric === "activeDevices" ? 3 * (totals.activeDevices as number) : (totals.downloads as number));
      }),
      { numRuns: 200 },
    );
  });

  it("quotes what RFC 4180 asks to be quoted", () => {
    const csv = csvOf({ series: [{ metric: "downloads", split: 'a,"b"', points: [{ date: "2026-01-01", value: 1 }] }] }, { metrics: ["downloads"], split: "version" }, []);
    expect(csv).toBe('date,version,downloads\r\n2026-01-01,"a,""b""",1\r\n');
  });
});
