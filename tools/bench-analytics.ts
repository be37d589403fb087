/**
 * §28's rows of `npm run bench`: downloads counted against the same downloads uncounted, 1,000
 * concurrent downloads of one module counted exactly, and the latency of a 25-month daily query.
 */
import autocannon from "autocannon";
import type { Deps } from "../functions/src/deps";
import { foldCounts } from "../functions/src/analytics/count-folder";
import { metricCounts, type MetricCount } from "../functions/src/metrics/metric-store";
import { pendingCountStore } from "../functions/src/metrics/pending-count-store";
import { daysFrom, monthsBetween } from "../functions/src/metrics/rules";
import { utcDay } from "../functions/src/core/time";
import { compare, countsOf, load, quick, report, type BenchServer } from "./bench-harness";

const BURST = 1_000;

/** The module's downloads today, once what waits to be counted is folded (as the deployment's `metricFold` does every minute). */
async function countedDownloads(deps: Deps, moduleId: string): Promise<number> {
  await foldCounts(deps.db);
  const [month] = await metricCounts(deps.db).months([moduleId], [utcDay(new Date()).slice(0, 7)]);
  const cell = month?.cells.get(utcDay(new Date()).slice(8, 10))?.get("downloads");
  return typeof cell?.total === "number" ? cell.total : 0;
}

export async function analyticsRows(deps: Deps, api: BenchServer, uncounted: BenchServer, seeded: { callers: string[]; moduleId: string }): Promise<void> {
  const { callers, moduleId } = seeded;
  console.log(`\nAnalytics (§28): downloads counted against the same API not counting them (${quick ? 2 : 6} rounds, taking turns), a burst, a long query:`);
  const route = `/api/v1/modules/download/${moduleId}`;
  await load(`${uncounted.origin}${route}`, { callers, amount: 1_000 });
  await load(`${api.origin}${route}`, { callers, amount: 1_000 });
  const comparison = await compare({ server: uncounted, url: `${uncounted.origin}${route}` }, { server: api, url: `${api.origin}${route}` }, { callers, amount: quick ? 300 : 3_000 });
  report({
    name: "download counted / uncounted",
    ratio: comparison.ratio,
    wanted: "≥ 0.9",
    ok: comparison.ratio >= 0.9,
    detail: `${Math.round(comparison.target.rps)} vs ${Math.round(comparison.baseline.rps)} req/s; ${comparison.spread}`,
  });

  // A burst: 1,000 downloads at once, each on a connection of its own; every one answered is counted once.
  await countsOf(api);
  const before = await countedDownloads(deps, moduleId);
  let turn = 0;
  const burst = await autocannon({
    url: `${api.origin}${route}`,
    connections: BURST,
    amount: BURST,
    requests: [{ setupRequest: (req: autocannon.Request) => ({ ...req, headers: { ...req.headers, authorization: `Bearer ${callers[turn++ % callers.length]}` } }) }],
  });
  await countsOf(api);
  const counted = (await countedDownloads(deps, moduleId)) - before;
  const answered = burst["2xx"];
  report({ name: `${BURST} concurrent downloads: counted / answered`, ratio: answered === 0 ? 0 : counted / answered, wanted: "= 1.00", ok: counted === answered && answered === BURST, detail: `${answered} answered, ${counted} counted, ${burst.non2xx + burst.errors} failed` });

  // 25 months of daily figures, read back by day: one document per month.
  const to = utcDay(new Date());
  const from = daysFrom(utcDay(new Date(Date.now() - 760 * 86_400_000)), to).find((day) => day.endsWith("-01"))!;
  const days = daysFrom(from, to);
  const counts: MetricCount[] = days.flatMap((day, index) => [
    { moduleId, day, metric: "downloads", amount: 100 + (index % 7), version: "1.0.0", platform: "win32" },
    { moduleId, day, metric: "pageViews", amount: 300 + (index % 11) },
    { moduleId, day, metric: "revenue", amount: 1_900, currency: "usd" },
  ]);
  for (let start = 0; start < counts.length; start += 300) {
    const batch = deps.db.batch();
    pendingCountStore(deps.db).addIn(batch, counts.slice(start, start + 300));
    await batch.commit();
  }
  await foldCounts(deps.db);
  // The bench's developer (seedReads) owns the module.
  const developerToken = (await deps.identity.signInWithPassword("bench@example.test", "bench-password")).idToken;
  const query = `${api.origin}/api/v1/developers/modules/${moduleId}/metrics?from=${from}&to=${to}&interval=day`;
  const latencies: number[] = [];
  for (let index = 0; index < (quick ? 10 : 40); index += 1) {
    const started = performance.now();
    const answer = await fetch(query, { headers: { Authorization: `Bearer ${developerToken}` } });
    if (!answer.ok) throw new Error(`the 25-month query answered ${answer.status}: ${await answer.text()}`);
    await answer.arrayBuffer();
    latencies.push(performance.now() - started);
  }
  latencies.sort((a, b) => a - b);
  const p50 = latencies[Math.floor(latencies.length / 2)];
  const p95 = latencies[Math.min(latencies.length - 1, Math.ceil(latencies.length * 0.95) - 1)];
  report({ name: `25-month daily query (${monthsBetween(from, to).length} months, ${days.length} days)`, ratio: p95, wanted: "figure", ok: null, detail: `p50 ${p50.toFixed(0)} ms, p95 ${p95.toFixed(0)} ms over ${latencies.length} queries, one document per month` });
}
