import { useEffect, useState } from "preact/hooks";
import { dataOf, type Schemas, type SignedInApi } from "../api";
import { formatDate } from "../format";
import { ErrorMessage, Loading, RetryableError, StatusMessage } from "../ui/messages";
import { useAction } from "../ui/use-action";
import { CATEGORY_WORDS, DECISION_WORDS, GROUND_WORDS } from "./decision-words";

type Decision = Schemas["Decision"];

/** Whose decisions: a publisher's, about its modules (the portal), or a user's, about their reviews (the account page). */
type Whose = "publisher" | "reviews";

const TEXTS: Record<Whose, { heading: string; intro: string; none: string | null }> = {
  publisher: {
    heading: "Decisions",
    intro: "When someone reports one of your modules and we act on it, or decide not to, the decision and its reasons are here. You may appeal each within six months; another person hears the appeal.",
    none: "No decisions about your modules.",
  },
  // A user without any sees nothing of it: most never will.
  reviews: { heading: "Decisions about your reviews", intro: "We acted on reports about these reviews of yours. You may appeal each within six months; another person hears the appeal.", none: null },
};

/**
 * Moderation decisions (§30, the DSA's Art. 17 and 20), each with its statement of reasons, and
 * "Appeal" while the six months run and no appeal was filed.
 */
export function Decisions({ api, whose }: { api: SignedInApi; whose: Whose }) {
  const [decisions, setDecisions] = useState<Schemas["DecisionList"] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const texts = TEXTS[whose];
  const headingId = `decisions-${whose}-heading`;
  const load = async (cursor: string | null) => {
    const query = { limit: 20, ...(cursor ? { cursor } : {}) };
    const page = await dataOf(whose === "publisher" ? api.GET("/developers/decisions", { params: { query } }) : api.GET("/users/me/decisions", { params: { query } }));
    setDecisions((before) => (cursor && before ? { ...page, items: [...before.items, ...page.items] } : page));
  };
  const reload = () => {
    setError(null);
    load(null).catch(setError);
  };
  useEffect(reload, [api]);
  if (texts.none === null && decisions?.items.length === 0) return null;

  return (
    <section aria-labelledby={headingId} class="panel">
      <h2 id={headingId}>{texts.heading}</h2>
      <p class="muted">{texts.intro}</p>
      {error ? <RetryableError error={error} what="the decisions" retry={reload} /> : null}
      {!error && decisions === null && <Loading what="the decisions" />}
      {decisions && decisions.items.length === 0 && <p class="muted">{texts.none}</p>}
      {decisions && decisions.items.length > 0 && (
        <ul class="decision-list">
          {decisions.items.map((decision) => (
            <li key={decision.id}>
              <DecisionCard api={api} decision={decision} onAppealed={reload} />
            </li>
          ))}
        </ul>
      )}
      {decisions?.nextCursor && (
        <button type="button" class="secondary" onClick={() => load(decisions.nextCursor).catch(setError)}>
          More decisions
        </button>
      )}
    </section>
  );
}

function DecisionCard({ api, decision, onAppealed }: { api: SignedInApi; decision: Decision; onAppealed: () => void }) {
  const what = "reviewId" in decision.target ? `A review of ${decision.target.moduleId}` : `${decision.target.moduleId}${decision.target.version ? ` ${decision.target.version}` : ""}`;
  const headingId = `decision-${decision.id}`;
  const appealable = !decision.appeal && !decision.reversed && new Date(decision.appealOpenUntil) > new Date();
  return (
    <article class="decision" aria-labelledby={headingId}>
      <h3 id={headingId}>
        {what}: {DECISION_WORDS[decision.decision]}
        {decision.reversed && <span class="badge">Reversed on appeal</span>}
      </h3>
      <dl class="facts">
        <dt>Decided</dt>
        <dd>{formatDate(decision.decidedAt)}</dd>
        <dt>Reported as</dt>
        <dd>{CATEGORY_WORDS[decision.category]}</dd>
        <dt>Ground</dt>
        <dd>
          {GROUND_WORDS[decision.ground]} {decision.reference}
        </dd>
        <dt>Automated</dt>
        <dd>{decision.automated ? "Automated means took part" : "Decided by a person"}</dd>
      </dl>
      <p class="decision-facts">{decision.facts}</p>
      {decision.appeal && (
        <p class="appeal-state">
          Your appeal of {formatDate(decision.appeal.filedAt)}: {decision.appeal.status === "open" ? "being heard." : `${decision.appeal.status === "reversed" ? "successful" : "not successful"} (${formatDate(decision.appeal.decidedAt)}). ${decision.appeal.reasons ?? ""}`}
        </p>
      )}
      {appealable && <AppealForm api={api} decision={decision} onAppealed={onAppealed} />}
    </article>
  );
}

function AppealForm({ api, decision, onAppealed }: { api: SignedInApi; decision: Decision; onAppealed: () => void }) {
  const [open, setOpen] = useState(false);
  const { error, status, run } = useAction();
  const field = `appeal-${decision.id}`;
  const send = (event: Event) => {
    event.preventDefault();
    const explanation = String(new FormData(event.currentTarget as HTMLFormElement).get("explanation") ?? "").trim();
    return run(async () => {
      await dataOf(api.POST("/decisions/{id}/appeals", { params: { path: { id: decision.id } }, body: { explanation } }));
      onAppealed();
      return "Appeal sent: you will hear the outcome by email.";
    });
  };
  if (!open) {
    return (
      <p>
        <button type="button" class="secondary" aria-expanded="false" onClick={() => setOpen(true)}>
          Appeal
        </button>{" "}
        <span class="muted">until {formatDate(decision.appealOpenUntil)}</span>
      </p>
    );
  }
  return (
    <form class="stacked" onSubmit={send} aria-label={`Appeal decision ${decision.id}`}>
      <div class="field">
        <label for={field}>Why should this decision be reversed?</label>
        <textarea id={field} name="explanation" required minLength={20} maxLength={5000} rows={4} autoFocus />
      </div>
      <button type="submit">Send appeal</button>
      <ErrorMessage error={error} />
      <StatusMessage>{status}</StatusMessage>
    </form>
  );
}
