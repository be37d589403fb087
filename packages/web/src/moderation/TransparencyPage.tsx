import { useEffect, useState } from "preact/hooks";
import { dataOf, publicApi, type Schemas } from "../api";
import { countOf, formatCount, formatDate, utcDay } from "../format";
import { ErrorMessage, Loading, RetryableError } from "../ui/messages";
import { useTitle } from "../ui/use-title";
import { CATEGORY_WORDS, DECISION_WORDS, SOURCE_WORDS } from "./decision-words";

type Figures = Schemas["TransparencyFigures"];
type Period = { from: string; to: string };

const GROUND_NAMES: Record<keyof Figures["decisions"]["byGround"], string> = { law: "Illegal under a law", terms: "Against the marketplace's terms" };

/**
 * `/transparency` (§30, the DSA's Art. 15 and 24): what people reported and what the marketplace
 * decided in a period, counted from the decisions themselves; no account needed.
 */
export function TransparencyPage() {
  useTitle("Transparency");
  const [period, setPeriod] = useState<Period>({ from: utcDay(-364), to: utcDay(0) });
  const [figures, setFigures] = useState<Figures | null>(null);
  const [decisions, setDecisions] = useState<Schemas["PublicDecisionList"] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [formError, setFormError] = useState<string | null>(null);

  const load = async ({ from, to }: Period) => {
    const [counted, listed] = await Promise.all([
      dataOf(publicApi.GET("/transparency/figures", { params: { query: { from, to } } })),
      dataOf(publicApi.GET("/transparency/decisions", { params: { query: { from, to, limit: 20 } } })),
    ]);
    setFigures(counted);
    setDecisions(listed);
  };
  const reload = () => {
    setError(null);
    load(period).catch(setError);
  };
  useEffect(reload, [period]);

  const choose = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const from = String(form.get("from") ?? "");
    const to = String(form.get("to") ?? "");
    const days = (Date.parse(to) - Date.parse(from)) / 86_400_000 + 1;
    if (!(days >= 1 && days <= 366)) return setFormError("Choose a period of 1 to 366 days, the first day before the last.");
    setFormError(null);
    setPeriod({ from, to });
  };

  return (
    <section class="page transparency">
      <h1>Transparency</h1>
      <p>
        What people reported to the marketplace, and what we decided, as the EU's Digital Services Act asks. Anyone may report a module or a review from its page, without an account; every decision is explained to those it affects, and may be appealed within six months.
      </p>
      <form class="period-form" onSubmit={choose} aria-label="Period">
        <div class="field inline-field">
          <label for="period-from">From</label>
          <input id="period-from" name="from" type="date" required defaultValue={period.from} />
        </div>
        <div class="field inline-field">
          <label for="period-to">To</label>
          <input id="period-to" name="to" type="date" required defaultValue={period.to} />
        </div>
        <button type="submit">Show</button>
        <ErrorMessage error={formError} />
      </form>
      {error ? <RetryableError error={error} what="the figures" retry={reload} /> : null}
      {!error && !figures && <Loading what="the figures" />}
      {figures && <FigureTables figures={figures} />}
      {decisions && <DecisionTable decisions={decisions} />}
    </section>
  );
}

function FigureTables({ figures }: { figures: Figures }) {
  const noticeCount = Object.values(figures.notices.byCategory).reduce((sum, count) => sum + count, 0);
  const decisionCount = Object.values(figures.decisions.byKind).reduce((sum, count) => sum + count, 0);
  return (
    <>
      <p class="summary" aria-live="polite">
        {formatDate(figures.from)} to {formatDate(figures.to)}: {countOf(noticeCount, "notice")}, {countOf(decisionCount, "decision")}
        {figures.medianHoursToDecision !== null && <>, decided in a median of {formatCount(figures.medianHoursToDecision)} hours</>}.
      </p>
      <div class="figure-grid">
        <Counts caption="Notices by category" rows={Object.entries(figures.notices.byCategory).map(([key, count]) => [CATEGORY_WORDS[key as keyof typeof CATEGORY_WORDS], count])} />
        <Counts caption="Notices by who sent them" rows={Object.entries(figures.notices.bySource).map(([key, count]) => [SOURCE_WORDS[key as keyof typeof SOURCE_WORDS], count])} />
        <Counts caption="Decisions by kind" rows={Object.entries(figures.decisions.byKind).map(([key, count]) => [DECISION_WORDS[key as keyof typeof DECISION_WORDS], count])} />
        <Counts caption="Decisions by ground" rows={Object.entries(figures.decisions.byGround).map(([key, count]) => [GROUND_NAMES[key as keyof typeof GROUND_NAMES], count])} />
        <Counts
          caption="Appeals"
          rows={[
            ["Upheld (the decision stands)", figures.appeals.upheld],
            ["Reversed", figures.appeals.reversed],
            ["Being heard", figures.appeals.open],
          ]}
        />
        <Counts caption="Suspensions" rows={[["Publishers suspended", figures.suspensions]]} />
      </div>
    </>
  );
}

function Counts({ caption, rows }: { caption: string; rows: [string, number][] }) {
  return (
    <table class="counts">
      <caption>{caption}</caption>
      <tbody>
        {rows.map(([name, count]) => (
          <tr key={name}>
            <th scope="row">{name}</th>
            <td>{formatCount(count)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function DecisionTable({ decisions }: { decisions: Schemas["PublicDecisionList"] }) {
  return (
    <section aria-labelledby="recent-decisions-heading">
      <h2 id="recent-decisions-heading">Latest decisions</h2>
      {decisions.items.length === 0 ? (
        <p class="muted">No decisions in this period.</p>
      ) : (
        <div class="table-scroll">
          <table class="stacked">
            <thead>
              <tr>
                <th scope="col">Decided</th>
                <th scope="col">Content</th>
                <th scope="col">Reported as</th>
                <th scope="col">Decision</th>
                <th scope="col">Ground</th>
              </tr>
            </thead>
            <tbody>
              {decisions.items.map((decision) => (
                <tr key={decision.id}>
                  <td data-label="Decided">{formatDate(decision.decidedAt)}</td>
                  <td data-label="Content">{decision.contentType === "module" ? "A module" : "A review"}</td>
                  <td data-label="Reported as">{CATEGORY_WORDS[decision.category]}</td>
                  <td data-label="Decision">
                    {DECISION_WORDS[decision.decision]}
                    {decision.automated && " (automated)"}
                  </td>
                  <td data-label="Ground">
                    {decision.ground === "law" ? "Law" : "Terms"}: {decision.reference}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
