import { CategoryScale, Chart, Legend, LinearScale, LineController, LineElement, PointElement, Tooltip } from "chart.js";
import { useEffect, useRef, useState } from "preact/hooks";
import { dataOf, type Schemas, type SignedInApi } from "../api";
import { formatMoney, utcDay } from "../format";
import { ErrorMessage } from "../ui/messages";
import { seriesColour } from "./chart-colours";
import { ModuleSelect } from "./ModuleSelect";

Chart.register(LineController, LineElement, PointElement, CategoryScale, LinearScale, Legend, Tooltip);

type Metrics = Schemas["Metrics"];
type Value = Metrics["totals"][string];

const LABELS: Record<string, string> = {
  downloads: "Downloads",
  installs: "Installs",
  uninstalls: "Uninstalls",
  activeDevices: "Active devices",
  pageViews: "Page views",
  purchases: "Purchases",
  trials: "Trials",
  trialConversions: "Trial conversions",
  revenue: "Revenue",
  refunds: "Refunds",
  net: "Net",
};

/** The range presets (§28): the days back from today, and the buckets that read best at that length. */
const RANGES = [
  { id: "7d", label: "7 days", days: 7, interval: "day" },
  { id: "30d", label: "30 days", days: 30, interval: "day" },
  { id: "90d", label: "90 days", days: 90, interval: "day" },
  { id: "12m", label: "12 months", days: 365, interval: "week" },
  { id: "all", label: "All", days: 3650, interval: "month" },
] as const;

type Range = (typeof RANGES)[number];
type SplitChoice = "" | "version" | "platform";

const MONEY = new Set(["revenue", "refunds", "net"]);

/**
 * The portal's Analytics (§28): a row of totals (each metric over the range, with its change
 * against the range before it), one line chart of the metric picked in that row, split by version
 * or platform on request, the funnel from page views to installs to purchases, the chart's
 * numbers in a table, and the same figures as CSV.
 */
export function Analytics({ api, modules }: { api: SignedInApi; modules: Schemas["DeveloperModules"]["items"] }) {
  const [moduleId, setModuleId] = useState("");
  const [range, setRange] = useState<Range>(RANGES[1]);
  const [split, setSplit] = useState<SplitChoice>("");
  const [picked, setPicked] = useState("downloads");
  const [metrics, setMetrics] = useState<Metrics | null>(null);
  const [before, setBefore] = useState<Metrics | null>(null);
  const [error, setError] = useState<unknown>(null);
  const query = { from: utcDay(-(range.days - 1)), to: utcDay(0), interval: range.interval, ...(split ? { split } : {}) };
  // The range before, as long, for each total's change ("all" has none before it).
  const previous = range.id === "all" ? null : { from: utcDay(-(2 * range.days - 1)), to: utcDay(-range.days), interval: range.interval };

  useEffect(() => {
    setError(null);
    const read = (q: Record<string, string>) => (moduleId ? api.GET("/developers/modules/{id}/metrics", { params: { path: { id: moduleId }, query: q } }) : api.GET("/developers/metrics", { params: { query: q } }));
    Promise.all([dataOf(read(query)), previous ? dataOf(read(previous)) : Promise.resolve(null)]).then(
      ([current, earlier]) => {
        setMetrics(current as Metrics);
        setBefore(earlier as Metrics | null);
      },
      (failure) => {
        setMetrics(null);
        setBefore(null);
        setError(failure);
      },
    );
  }, [api, moduleId, range, split]);

  const exportCsv = async () => {
    setError(null);
    try {
      const csvQuery = { ...query, format: "csv" as const };
      const csv = await dataOf<string>(
        moduleId
          ? api.GET("/developers/modules/{id}/metrics", { params: { path: { id: moduleId }, query: csvQuery }, parseAs: "text" })
          : api.GET("/developers/metrics", { params: { query: csvQuery }, parseAs: "text" }),
      );
      const link = document.createElement("a");
      link.href = URL.createObjectURL(new Blob([csv], { type: "text/csv" }));
      link.download = `${moduleId || "all-modules"}-${query.from}-${query.to}.csv`;
      link.click();
      setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
    } catch (failure) {
      setError(failure);
    }
  };

  if (modules.length === 0) return null;
  return (
    <section aria-labelledby="analytics-heading" class="panel analytics">
      <h2 id="analytics-heading">Analytics</h2>
      <form class="grid-form" onSubmit={(event) => event.preventDefault()}>
        <ModuleSelect id="analytics-module" modules={modules} value={moduleId} onChange={setModuleId} allLabel="All your modules" />
        <div class="field">
          <label for="analytics-split">Split by</label>
          <select id="analytics-split" value={split} onChange={(event) => setSplit(event.currentTarget.value as SplitChoice)}>
            <option value="">Nothing</option>
            <option value="version">Version</option>
            <option value="platform">Platform</option>
          </select>
        </div>
        <div class="field">
          <button type="button" class="secondary" onClick={() => void exportCsv()}>
            Export CSV
          </button>
        </div>
      </form>
      <div class="range-picker" role="group" aria-label="Range">
        {RANGES.map((choice) => (
          <button type="button" key={choice.id} class="secondary range-choice" aria-pressed={choice.id === range.id} onClick={() => setRange(choice)}>
            {choice.label}
          </button>
        ))}
      </div>
      <ErrorMessage error={error} />
      {metrics && (
        <>
          <Totals metrics={metrics} before={before} range={range} picked={picked} onPick={setPicked} />
          <MetricChart key={`${picked}-${split}-${range.id}-${moduleId}`} metric={picked} metrics={metrics} />
          <Funnel totals={metrics.totals} />
        </>
      )}
    </section>
  );
}

/** A total in words: a count, or each currency's amount (none: nothing in the first currency shown). */
const totalText = (value: Value | undefined) =>
  typeof value === "object" ? Object.entries(value).map(([currency, amount]) => formatMoney(amount, currency)).join(", ") || formatMoney(0, "usd") : String(value ?? 0);

/** The change of a total against the range before: a count's, or a single currency's; null when there is nothing to compare. */
function changeOf(now: Value | undefined, earlier: Value | undefined): number | null {
  if (earlier === undefined) return null;
  const single = (value: Value | undefined): number | null => {
    if (typeof value === "number") return value;
    const amounts = Object.values(value ?? {});
    return amounts.length <= 1 ? (amounts[0] ?? 0) : null;
  };
  const [current, previous] = [single(now), single(earlier)];
  if (current === null || previous === null) return null;
  if (previous === 0) return current === 0 ? 0 : null;
  return (current - previous) / previous;
}

/** The row of totals (§28): each metric over the range with its change; pressing one charts it. */
function Totals({ metrics, before, range, picked, onPick }: { metrics: Metrics; before: Metrics | null; range: Range; picked: string; onPick: (metric: string) => void }) {
  const against = `the ${range.label.toLowerCase()} before`;
  return (
    <div class="metric-totals" role="group" aria-label={`Totals, ${metrics.from} to ${metrics.to}: pick one to chart it`}>
      {Object.keys(LABELS).map((metric) => {
        const change = before ? changeOf(metrics.totals[metric], before.totals[metric]) : null;
        const direction = change === null || change === 0 ? "flat" : change > 0 ? "up" : "down";
        const changeText = change === null ? (before ? `new against ${against}` : "") : `${change > 0 ? "+" : ""}${(change * 100).toFixed(change === 0 ? 0 : 1)} % against ${against}`;
        return (
          <button type="button" key={metric} class="metric-total" aria-pressed={metric === picked} data-metric={metric} onClick={() => onPick(metric)}>
            <span class="metric-name">{LABELS[metric]}</span>
            <strong class="metric-value">{totalText(metrics.totals[metric])}</strong>
            {changeText && (
              <span class={`metric-change ${direction}`}>
                <span aria-hidden="true">{direction === "up" ? "▲ " : direction === "down" ? "▼ " : ""}</span>
                {changeText}
              </span>
            )}
          </button>
        );
      })}
    </div>
  );
}

const countOf = (value: Value | undefined) => (typeof value === "number" ? value : 0);
const rate = (part: number, whole: number) => (whole === 0 ? "–" : `${((part / whole) * 100).toFixed(1)} %`);

/** Page views → installs → purchases, with the rate from each step to the next. */
function Funnel({ totals }: { totals: Metrics["totals"] }) {
  const views = countOf(totals.pageViews);
  const installs = countOf(totals.installs);
  const purchases = countOf(totals.purchases);
  return (
    <ol class="funnel" aria-label="Funnel">
      <li>
        <strong>{views}</strong> page views
      </li>
      <li>
        <strong>{installs}</strong> installs <span class="muted">({rate(installs, views)} of page views)</span>
      </li>
      <li>
        <strong>{purchases}</strong> purchases <span class="muted">({rate(purchases, installs)} of installs)</span>
      </li>
    </ol>
  );
}

/** A series' label: its split value, and for money its currency. */
function datasetsOf(metric: string, metrics: Metrics) {
  const series = metrics.series.filter((entry) => entry.metric === metric);
  if (!MONEY.has(metric)) return series.map((entry) => ({ label: entry.split ?? LABELS[metric], currency: undefined as string | undefined, values: entry.points.map((point) => countOf(point.value)) }));
  const currencies = [...new Set(series.flatMap((entry) => entry.points.flatMap((point) => (typeof point.value === "object" ? Object.keys(point.value) : []))))].sort();
  return series.flatMap((entry) =>
    currencies.map((currency) => ({
      label: `${entry.split ? `${entry.split} ` : ""}${currency.toUpperCase()}`,
      currency: currency as string | undefined,
      values: entry.points.map((point) => (typeof point.value === "object" ? (point.value[currency] ?? 0) : 0)),
    })),
  );
}

function MetricChart({ metric, metrics }: { metric: string; metrics: Metrics }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const dates = metrics.series.find((entry) => entry.metric === metric)?.points.map((point) => point.date) ?? [];
  const datasets = datasetsOf(metric, metrics);
  const shown = (value: number, currency?: string) => (currency ? formatMoney(value, currency) : String(value));
  const summary = `${LABELS[metric]} from ${metrics.from} to ${metrics.to}: ${metric === "activeDevices" ? "on the last day" : "in all"} ${totalText(metrics.totals[metric])}.`;

  useEffect(() => {
    const chart = new Chart(canvas.current!, {
      type: "line",
      data: {
        labels: dates,
        datasets: datasets.map((dataset, index) => ({
          label: dataset.label,
          data: dataset.values.map((value) => (dataset.currency ? value / 100 : value)),
          borderColor: seriesColour(index),
          backgroundColor: seriesColour(index),
          pointRadius: dates.length > 60 ? 0 : 2,
          tension: 0.2,
        })),
      },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        interaction: { mode: "index", intersect: false },
        // Whole steps, money too (the table and the tooltip give cents): an empty range reads 0 and 1, not 0.1, 0.2, ….
        scales: { y: { beginAtZero: true, suggestedMax: 1, ticks: { precision: 0 } } },
        plugins: { legend: { display: datasets.length > 1, position: "bottom" } },
      },
    });
    return () => chart.destroy();
  }, [metrics]);

  return (
    <figure class="chart metric-chart" data-metric={metric}>
      <h3>{LABELS[metric]}</h3>
      <div class="chart-box">
        <canvas ref={canvas} role="img" aria-label={summary} />
      </div>
      <figcaption>{summary}</figcaption>
      <details>
        <summary>Show the numbers</summary>
        <div class="table-scroll" tabIndex={0} role="region" aria-label={`${LABELS[metric]} per ${metrics.interval}`}>
          <table>
            <thead>
              <tr>
                <th scope="col">{metrics.interval === "day" ? "Day" : metrics.interval === "week" ? "Week of" : "Month"}</th>
                {datasets.map((dataset) => (
                  <th scope="col" key={dataset.label}>
                    {dataset.label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {dates.map((date, row) => (
                <tr key={date}>
                  <th scope="row">{date}</th>
                  {datasets.map((dataset) => (
                    <td key={dataset.label}>{shown(dataset.values[row], dataset.currency)}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}
