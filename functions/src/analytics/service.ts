import { randomBytes } from "node:crypto";
import { isbot } from "isbot";
import type { z } from "zod";
import { moduleNotFound } from "../access/visibility";
import { assertInCredentialScope, assertOwnsModule } from "../access/policy";
import { assertVisible, type Viewer } from "../access/visibility";
import { withinDeadline } from "../core/deadline";
import { utcDay } from "../core/time";
import type { Deps, OperatorDeps } from "../deps";
import { moduleStore } from "../marketplace/module-store";
import { metricCounts, type MetricMonth } from "../metrics/metric-store";
import { pendingCountStore } from "../metrics/pending-count-store";
import { statsRange } from "../publishing/stats";
import { addCells, csvOf, METRICS, monthsBetween, seriesOf, type DayCell, type Metric } from "../metrics/rules";
import { actingOwner, modulesActedOn, ownersActedFor, type Publisher } from "../publishing/publisher";
import { pageViewStore } from "./page-view-store";
import type { metricsQuerySchema, metricsSchema } from "./schemas";

/**
 * Analytics (contract §28): page views counted once per visitor, module and day, and the
 * figures read back from the month documents (metrics/metric-store.ts), for one module, a
 * publisher's modules or, for operators, the whole marketplace.
 */

/** Who viewed a page, as far as the request says (§28's visitor rule). */
export interface PageVisitor {
  uid: string | null;
  /** The visitor cookie (`__session`), when the request carried a well-formed one. */
  cookie: string | null;
  address: string;
  userAgent: string;
}

/**
 * The visitor cookie (§28): `__session`, the one cookie Firebase Hosting passes to a function
 * (any other never reaches it deployed). Its value: 128 random bits in hex.
 */
export const VISITOR_COOKIE_NAME = "__session";
/** A visitor cookie's value. */
export const VISITOR_COOKIE = /^[0-9a-f]{32}$/;

/**
 * POST /modules/:id/views: counts the view once per visitor and UTC day (a known crawler is not
 * counted). Answers the visitor cookie to set, when the request had none: it stands for this same
 * visitor for the rest of the day.
 */
export async function recordPageView({ db, clock }: Deps, moduleId: string, visitor: PageVisitor, viewer: Viewer): Promise<string | null> {
  const module = await moduleStore(db).getModule(moduleId);
  if (!module) throw moduleNotFound(moduleId);
  await assertVisible(module, viewer);
  if (isbot(visitor.userAgent)) return null;
  const now = clock();
  const day = utcDay(now);
  const cookie = visitor.cookie ?? randomBytes(16).toString("hex");
  const who = visitor.uid ? `user:${visitor.uid}` : visitor.cookie ? `cookie:${visitor.cookie}` : `address:${visitor.address}\n${visitor.userAgent}`;
  const keys = visitor.cookie ? [who] : [who, `cookie:${cookie}`];
  const views = pageViewStore(db);
  await withinDeadline(
    "Firestore (page views)",
    db.runTransaction(async (tx) => {
      const [seen] = await views.seenIn(tx, moduleId, day, keys);
      if (seen && visitor.cookie) return;
      views.markIn(tx, moduleId, day, keys, now);
      if (!seen) pendingCountStore(db).addIn(tx, [{ moduleId, day, metric: "pageViews", amount: 1 }]);
    }),
  );
  return visitor.cookie ? null : cookie;
}

/** At most 10 years at once (§28). */
const MAX_DAYS = 3653;

/** The query's range: the last 30 days by default (as download statistics'), `from` not after `to`. */
const rangeOf = (query: { from?: string; to?: string }, now: Date) => statsRange(query, now, MAX_DAYS);

type MetricsQuery = z.output<typeof metricsQuerySchema>;
type MetricsAnswer = z.output<typeof metricsSchema>;

/** The answer as JSON, or its CSV when asked for. */
export type MetricsReply = { json: MetricsAnswer } | { csv: string };

/** The cells of several modules' months, added together day by day. */
function cellsOf(months: MetricMonth[]): (day: string, metric: Metric) => DayCell | undefined {
  const byDay = new Map<string, Map<string, DayCell>>();
  for (const month of months) {
    for (const [dd, metrics] of month.cells) {
      const day = `${month.month}-${dd}`;
      const into = byDay.get(day) ?? new Map<string, DayCell>();
      byDay.set(day, into);
      for (const [metric, cell] of metrics) into.set(metric, into.has(metric) ? addCells(into.get(metric)!, cell) : cell);
    }
  }
  return (day, metric) => byDay.get(day)?.get(metric);
}

function answer(months: MetricMonth[], range: { from: string; to: string }, query: MetricsQuery, currencies: readonly string[], moduleId?: string): MetricsReply {
  const asked = { ...range, interval: query.interval, metrics: query.metrics ?? METRICS, split: query.split };
  const result = seriesOf(cellsOf(months), asked);
  if (query.format === "csv") return { csv: csvOf(result, asked, currencies) };
  return { json: { ...(moduleId ? { moduleId } : {}), from: range.from, to: range.to, interval: asked.interval, ...result } };
}

/** GET /developers/modules/:id/metrics: one module's figures, for its owner. */
export async function moduleMetrics({ db, clock, config }: Deps, publisher: Publisher, moduleId: string, query: MetricsQuery): Promise<MetricsReply> {
  assertInCredentialScope(moduleId, publisher.credential);
  const range = rangeOf(query, clock());
  const [module, owner] = await Promise.all([moduleStore(db).getModule(moduleId), actingOwner(db, publisher, moduleId)]);
  if (!module) throw moduleNotFound(moduleId);
  assertOwnsModule(moduleId, module, owner.id);
  const months = await metricCounts(db).months([moduleId], monthsBetween(range.from, range.to));
  return answer(months, range, query, config.payments.currencies, moduleId);
}

/**
 * GET /developers/metrics: the same over every module the caller publishes: the months of each
 * owner it acts for (itself, the businesses it administers), one document a month each whatever
 * the number of modules; a publish token limited to some modules reads those modules' months.
 */
export async function publisherMetrics({ db, clock, config }: Deps, publisher: Publisher, query: MetricsQuery): Promise<MetricsReply> {
  const range = rangeOf(query, clock());
  const months = monthsBetween(range.from, range.to);
  const { credential } = publisher;
  const read =
    credential.kind === "oidc"
      ? await metricCounts(db).months((await modulesActedOn(db, publisher)).map((module) => module.id), months)
      : (await Promise.all((await ownersActedFor(db, publisher.id)).map((owner) => metricCounts(db).publisherMonths(owner, months)))).flat();
  return answer(read, range, query, config.payments.currencies);
}

/** Operators (`npm run admin -- metrics`): one module's figures, or the whole marketplace's. */
export async function marketplaceMetrics({ db, clock }: OperatorDeps, query: MetricsQuery & { module?: string }, currencies: readonly string[]): Promise<MetricsReply> {
  const range = rangeOf(query, clock());
  const months = monthsBetween(range.from, range.to);
  const read = query.module ? await metricCounts(db).months([query.module], months) : await metricCounts(db).marketplaceMonths(months);
  return answer(read, range, query, currencies, query.module);
}
