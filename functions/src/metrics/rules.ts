import { DAY_MS, utcDay } from "../core/time";

/**
 * Analytics (contract §28) as pure functions: what is counted, the days a device's activity keeps
 * it active, and how a range of daily figures becomes series, totals and CSV.
 */

export const COUNT_METRICS = ["downloads", "installs", "uninstalls", "activeDevices", "pageViews", "purchases", "trials", "trialConversions"] as const;
export const MONEY_METRICS = ["revenue", "refunds", "net"] as const;
export const METRICS = [...COUNT_METRICS, ...MONEY_METRICS] as const;
export type Metric = (typeof METRICS)[number];
export type MoneyMetric = (typeof MONEY_METRICS)[number];
export const isMoney = (metric: Metric): metric is MoneyMetric => (MONEY_METRICS as readonly string[]).includes(metric);

export const PLATFORMS = ["win32", "darwin", "linux"] as const;
export type Platform = (typeof PLATFORMS)[number];
export const SPLITS = ["version", "platform"] as const;
export type Split = (typeof SPLITS)[number];
export const INTERVALS = ["day", "week", "month"] as const;
export type Interval = (typeof INTERVALS)[number];

/** What is not known of a count's version or platform (a page view's version, a purchase's platform). */
export const UNKNOWN = "unknown";

/** A day's figure of one metric: its total, and (for counts) how it splits by version and platform. */
export interface DayCell {
  total: number | Record<string, number>;
  version?: Record<string, number>;
  platform?: Record<string, number>;
}

export type Value = number | Record<string, number>;

export const parseDay = (day: string) => new Date(`${day}T00:00:00.000Z`);
export const addDays = (day: string, days: number) => utcDay(new Date(parseDay(day).getTime() + days * DAY_MS));
export const monthOf = (day: string) => day.slice(0, 7);

/** The months a range of days touches, in order (YYYY-MM). */
export function monthsBetween(from: string, to: string): string[] {
  const months: string[] = [];
  const cursor = parseDay(`${monthOf(from)}-01`);
  while (utcDay(cursor) <= to) {
    months.push(utcDay(cursor).slice(0, 7));
    cursor.setUTCMonth(cursor.getUTCMonth() + 1);
  }
  return months;
}

/** How long a device's activity keeps it active: the day itself and the 29 after (§28: the 30 days to a day). */
export const ACTIVE_DAYS = 30;

/**
 * The days a device's activity on `today` adds to its active days, given the last day it was
 * active before (null: never, or removed since): those its window did not cover yet.
 */
export function newlyActiveDays(lastDay: string | null, today: string): string[] {
  const start = lastDay === null || addDays(lastDay, ACTIVE_DAYS) <= today ? today : addDays(lastDay, ACTIVE_DAYS);
  const end = addDays(today, ACTIVE_DAYS - 1);
  return daysFrom(start, end);
}

/** The days still ahead of a device's window from `today` (what a removal takes away, or a version change moves). */
export function remainingActiveDays(lastDay: string, today: string): string[] {
  return daysFrom(today, addDays(lastDay, ACTIVE_DAYS - 1));
}

export function daysFrom(from: string, to: string): string[] {
  const days: string[] = [];
  for (let day = from; day <= to; day = addDays(day, 1)) days.push(day);
  return days;
}

/** The first day of the bucket a day falls in: itself, the Monday of its week, the first of its month. */
export function bucketOf(day: string, interval: Interval): string {
  if (interval === "day") return day;
  if (interval === "month") return `${monthOf(day)}-01`;
  const weekday = (parseDay(day).getUTCDay() + 6) % 7;
  return addDays(day, -weekday);
}

const add = (a: Value | undefined, b: Value): Value => {
  if (typeof b === "number") return (typeof a === "number" ? a : 0) + b;
  const sum: Record<string, number> = { ...(typeof a === "object" ? a : {}) };
  for (const [currency, amount] of Object.entries(b)) sum[currency] = (sum[currency] ?? 0) + amount;
  return sum;
};
const zeroOf = (metric: Metric): Value => (isMoney(metric) ? {} : 0);

/** Two modules' cells of one day and metric, added: totals, and each split value. */
export function addCells(a: DayCell, b: DayCell): DayCell {
  const splits = (key: "version" | "platform") => (a[key] || b[key] ? { [key]: add(a[key] ?? {}, b[key] ?? {}) as Record<string, number> } : {});
  return { total: add(a.total, b.total), ...splits("version"), ...splits("platform") };
}

export interface Point {
  date: string;
  value: Value;
}
export interface Series {
  metric: Metric;
  split?: string;
  points: Point[];
}

/** The value of one split of a cell: a named version or platform, or what is left of the total (UNKNOWN). */
function splitValue(cell: DayCell | undefined, split: Split | undefined, key: string | undefined, metric: Metric): Value {
  if (!cell) return zeroOf(metric);
  if (split === undefined) return cell.total;
  const parts = cell[split] ?? {};
  if (typeof cell.total !== "number") return key === UNKNOWN ? cell.total : {};
  if (key !== UNKNOWN) return parts[key!] ?? 0;
  // Counted as unknown (a confirm without a platform), and what no split value holds (counted before splits).
  return cell.total - Object.entries(parts).reduce((sum, [name, n]) => (name === UNKNOWN ? sum : sum + n), 0);
}

/** At most this many series per metric in an answer (§28): the largest by total, the rest summed as OTHER. */
export const MAX_SERIES = 20;
/** The series that sums the split values past the MAX_SERIES − 1 largest (no version or platform is called so). */
export const OTHER = "other";

/** What ranks a series: its total as the metric totals it (`activeDevices`: its last point), money summed over currencies. */
function seriesWeight(metric: Metric, points: Point[]): number {
  const magnitude = (value: Value) => (typeof value === "number" ? value : Object.values(value).reduce((sum, n) => sum + n, 0));
  if (metric === "activeDevices") return points.length > 0 ? magnitude(points.at(-1)!.value) : 0;
  return points.reduce((sum, point) => sum + magnitude(point.value), 0);
}

/**
 * A metric's split series, at most MAX_SERIES: the largest by total, in their order, then OTHER,
 * the sum of the rest point by point (which keeps every bucket's and the CSV's sums whole).
 */
function capped(metric: Metric, series: Series[]): Series[] {
  if (series.length <= MAX_SERIES) return series;
  const ranked = series.map((entry) => ({ entry, weight: seriesWeight(metric, entry.points) })).sort((a, b) => b.weight - a.weight);
  const kept = new Set(ranked.slice(0, MAX_SERIES - 1).map(({ entry }) => entry));
  const rest = series.filter((entry) => !kept.has(entry));
  const other: Series = { metric, split: OTHER, points: rest[0].points.map((point, index) => ({ date: point.date, value: rest.reduce<Value>((sum, entry) => add(sum, entry.points[index].value), zeroOf(metric)) })) };
  return [...series.filter((entry) => kept.has(entry)), other];
}

/**
 * Series and totals of metrics over days `from`..`to` (inclusive) from each day's cells: one
 * series per metric (and split value, at most MAX_SERIES), one point per bucket; a bucket sums
 * its days, but `activeDevices` of a bucket is its last day's value, and its total the last bucket's.
 */
export function seriesOf(
  cells: (day: string, metric: Metric) => DayCell | undefined,
  query: { from: string; to: string; interval: Interval; metrics: readonly Metric[]; split?: Split },
): { series: Series[]; totals: Record<string, Value> } {
  const days = daysFrom(query.from, query.to);
  const buckets = [...new Set(days.map((day) => bucketOf(day, query.interval)))];
  const series: Series[] = [];
  const totals: Record<string, Value> = {};
  for (const metric of query.metrics) {
    const keys = query.split ? splitKeys(days, (day) => cells(day, metric), query.split, metric) : [undefined];
    const ofMetric: Series[] = [];
    for (const key of keys) {
      const byBucket = new Map<string, Value>(buckets.map((bucket) => [bucket, zeroOf(metric)]));
      for (const day of days) {
        const bucket = bucketOf(day, query.interval);
        const value = splitValue(cells(day, metric), query.split, key, metric);
        byBucket.set(bucket, metric === "activeDevices" ? value : add(byBucket.get(bucket), value));
      }
      const points = buckets.map((date) => ({ date, value: byBucket.get(date)! }));
      ofMetric.push({ metric, ...(key !== undefined ? { split: key } : {}), points });
    }
    series.push(...capped(metric, ofMetric));
    const whole = days.map((day) => cells(day, metric)?.total ?? zeroOf(metric));
    totals[metric] = metric === "activeDevices" ? (whole.at(-1) ?? 0) : whole.reduce<Value>((sum, value) => add(sum, value), zeroOf(metric));
  }
  return { series, totals };
}

/** The split values present in a range (sorted), and UNKNOWN when something is not split or nothing is. */
function splitKeys(days: string[], cellOf: (day: string) => DayCell | undefined, split: Split, metric: Metric): string[] {
  const keys = new Set<string>();
  let rest = false;
  for (const day of days) {
    const cell = cellOf(day);
    if (!cell) continue;
    for (const [key, n] of Object.entries(cell[split] ?? {})) if (n !== 0 && key !== UNKNOWN) keys.add(key);
    const remainder = splitValue(cell, split, UNKNOWN, metric);
    if (typeof remainder === "number" ? remainder !== 0 : Object.keys(remainder).length > 0) rest = true;
  }
  const sorted = [...keys].sort();
  return rest || sorted.length === 0 ? [...sorted, UNKNOWN] : sorted;
}

/** RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled. */
const csvField = (value: string) => (/[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value);

/**
 * The series as CSV (RFC 4180, CRLF): `date`, the split's name when split, then one column per
 * count metric and one per money metric and currency (`revenue_usd`); one row per date and split
 * value. Every column's sum equals the JSON's total (`activeDevices` aside).
 */
export function csvOf(result: { series: Series[] }, query: { metrics: readonly Metric[]; split?: Split }, currencies: readonly string[]): string {
  const seen = new Set(currencies);
  for (const entry of result.series) for (const point of entry.points) if (typeof point.value === "object") for (const currency of Object.keys(point.value)) seen.add(currency);
  const sortedCurrencies = [...seen].sort();
  const columns: string[] = query.metrics.flatMap((metric) => (isMoney(metric) ? sortedCurrencies.map((currency) => `${metric}_${currency}`) : [metric]));
  const rows = new Map<string, Map<string, number>>();
  const rowKey = (date: string, split: string | undefined) => `${date}\u0000${split ?? ""}`;
  for (const entry of result.series) {
    for (const point of entry.points) {
      const key = rowKey(point.date, entry.split);
      const row = rows.get(key) ?? new Map<string, number>();
      if (typeof point.value === "number") row.set(entry.metric, point.value);
      else for (const [currency, amount] of Object.entries(point.value)) row.set(`${entry.metric}_${currency}`, amount);
      rows.set(key, row);
    }
  }
  const header = ["date", ...(query.split ? [query.split] : []), ...columns];
  const lines = [header.map(csvField).join(",")];
  const ordered = [...rows.keys()].sort();
  for (const key of ordered) {
    const [date, split] = key.split("\u0000");
    const row = rows.get(key)!;
    lines.push([date, ...(query.split ? [split] : []), ...columns.map((column) => String(row.get(column) ?? 0))].map(csvField).join(","));
  }
  return `${lines.join("\r\n")}\r\n`;
}
