import { invalidRequest } from "../core/errors";
import { DAY_MS, utcDay } from "../core/time";

/** The rules of download statistics (contract §12): which days a request covers, and its answer. */

export const DEFAULT_STATS_DAYS = 30;
export const MAX_STATS_DAYS = 366;

/**
 * The days a statistics request covers: `to` defaults to today (UTC), `from` to 30 days ending
 * at `to`; at most `maxDays` (366 for download statistics), `from` not after `to`.
 */
export function statsRange(query: { from?: string; to?: string }, now: Date, maxDays = MAX_STATS_DAYS): { from: string; to: string } {
  const to = query.to ?? utcDay(now);
  const from = query.from ?? utcDay(new Date(Date.parse(to) - (DEFAULT_STATS_DAYS - 1) * DAY_MS));
  if (from > to) throw invalidRequest("from must not be after to.", [{ path: "from", message: `After to (${to}).` }]);
  const days = (Date.parse(to) - Date.parse(from)) / DAY_MS + 1;
  if (days > maxDays) throw invalidRequest(`At most ${maxDays} days at once; this asks for ${days}.`, [{ path: "from", message: "Too far before to." }]);
  return { from, to };
}

/** Every day of the range, in order. */
export function daysOf({ from, to }: { from: string; to: string }): string[] {
  const days: string[] = [];
  for (let at = Date.parse(from); at <= Date.parse(to); at += DAY_MS) days.push(utcDay(new Date(at)));
  return days;
}

/** The answer for a range: every day of it in order, zeros included, and the total. */
export function dailyStats(moduleId: string, range: { from: string; to: string }, counted: ReadonlyMap<string, { downloads: number; versions: Record<string, number> }>) {
  const days = daysOf(range).map((date) => ({ date, downloads: counted.get(date)?.downloads ?? 0, versions: counted.get(date)?.versions ?? {} }));
  return { moduleId, from: range.from, to: range.to, total: days.reduce((sum, day) => sum + day.downloads, 0), days };
}
