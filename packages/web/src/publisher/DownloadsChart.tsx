import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from "chart.js";
import { useEffect, useRef, useState } from "preact/hooks";
import { dataOf, type Schemas, type SignedInApi } from "../api";
import { countOf, utcDay } from "../format";
import { ErrorMessage } from "../ui/messages";
import { seriesColour } from "./chart-colours";
import { ModuleSelect } from "./ModuleSelect";

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip);

type Stats = Schemas["DownloadStats"];

/** Downloads per day of one module, stacked by version, over a range of days. */
export function DownloadsChart({ api, modules }: { api: SignedInApi; modules: Schemas["DeveloperModules"]["items"] }) {
  const published = modules.filter((module) => module.latestVersion !== null || module.downloads > 0);
  const [moduleId, setModuleId] = useState(published[0]?.id ?? "");
  const [from, setFrom] = useState(utcDay(-29));
  const [to, setTo] = useState(utcDay(0));
  const [stats, setStats] = useState<Stats | null>(null);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    if (!moduleId) return;
    setError(null);
    dataOf(api.GET("/developers/modules/{id}/stats", { params: { path: { id: moduleId }, query: { from, to } } })).then(setStats, (failure) => {
      setStats(null);
      setError(failure);
    });
  }, [api, moduleId, from, to]);

  if (published.length === 0) return null;
  return (
    <section aria-labelledby="downloads-heading" class="panel">
      <h2 id="downloads-heading">Downloads per day</h2>
      <form class="grid-form" onSubmit={(event) => event.preventDefault()}>
        <ModuleSelect id="stats-module" modules={published} value={moduleId} onChange={setModuleId} />
        <div class="field">
          <label for="stats-from">From</label>
          <input id="stats-from" type="date" value={from} max={to} onChange={(event) => event.currentTarget.value && setFrom(event.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="stats-to">To</label>
          <input id="stats-to" type="date" value={to} min={from} onChange={(event) => event.currentTarget.value && setTo(event.currentTarget.value)} />
        </div>
      </form>
      <ErrorMessage error={error} />
      {stats && <StatsView stats={stats} />}
    </section>
  );
}

function StatsView({ stats }: { stats: Stats }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const versions = [...new Set(stats.days.flatMap((day) => Object.keys(day.versions)))].sort((a, b) => b.localeCompare(a, undefined, { numeric: true }));
  const summary = `${countOf(stats.total, "download")} of ${stats.moduleId} from ${stats.from} to ${stats.to}${versions.length ? `, versions ${versions.join(", ")}` : ""}.`;

  useEffect(() => {
    const chart = new Chart(canvas.current!, {
      type: "bar",
      data: {
        labels: stats.days.map((day) => day.date.slice(5)),
        datasets: versions.map((version, index) => ({
          label: version,
          data: stats.days.map((day) => day.versions[version] ?? 0),
          backgroundColor: seriesColour(index),
        })),
      },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, ticks: { precision: 0 } } },
        plugins: { legend: { position: "bottom" } },
      },
    });
    return () => chart.destroy();
  }, [stats]);

  return (
    <figure class="chart">
      <div class="chart-box">
        <canvas ref={canvas} role="img" aria-label={summary} data-total={stats.total} />
      </div>
      <figcaption>{summary}</figcaption>
      <details>
        <summary>Show the numbers</summary>
        <div class="table-scroll" tabIndex={0} role="region" aria-label="Downloads per day and version">
          <table>
            <thead>
              <tr>
                <th scope="col">Day</th>
                <th scope="col">All</th>
                {versions.map((version) => (
                  <th scope="col" key={version}>
                    {version}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {stats.days.map((day) => (
                <tr key={day.date}>
                  <th scope="row">{day.date}</th>
                  <td>{day.downloads}</td>
                  {versions.map((version) => (
                    <td key={version}>{day.versions[version] ?? 0}</td>
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
