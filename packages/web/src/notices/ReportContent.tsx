import { useState } from "preact/hooks";
import { dataOf, publicApi, type Schemas, type SignedInApi } from "../api";
import { CATEGORY_WORDS } from "../moderation/decision-words";
import { CopyButton } from "../ui/CopyButton";
import { ErrorMessage } from "../ui/messages";
import { useAction } from "../ui/use-action";

type Target = Schemas["NoticeInput"]["target"];
type Category = Schemas["NoticeInput"]["category"];

/** The categories of §30's notices, in the order the form offers them, each explained in words a visitor recognises. */
const CATEGORIES: [Category, string][] = [
  ["malware", "it harms computers, steals data or hides what it does"],
  ["scam_or_fraud", "it deceives people to take their money or data"],
  ["illegal_content", "hate speech, terrorism, or anything else the law forbids"],
  ["intellectual_property", "it copies work you hold the rights to (we need your name and email)"],
  ["privacy", "it exposes personal data without consent"],
  ["protection_of_minors", "it endangers children"],
  ["other", "it breaks the marketplace's terms in another way"],
];

/**
 * "Report" (§30, the DSA's Art. 16): anyone, with or without an account, tells the marketplace
 * that a module or a review is illegal. Signed in, the report carries the account's name and email.
 */
export function ReportContent({ target, what, api }: { target: Target; what: string; api: SignedInApi | null }) {
  const [open, setOpen] = useState(false);
  const [category, setCategory] = useState<Category>("malware");
  const [received, setReceived] = useState<(Schemas["ReceivedNotice"] & { told: boolean }) | null>(null);
  const { error, run } = useAction();
  const id = "moduleId" in target ? target.moduleId : target.reviewId;
  const field = (name: string) => `report-${name}-${id.replace(/[^A-Za-z0-9-]/g, "-")}`;

  const send = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const text = (name: string) => String(form.get(name) ?? "").trim();
    return run(async () => {
      if (!api && Boolean(text("name")) !== Boolean(text("email"))) throw new Error("Give your name with your email (to hear what was decided), or neither.");
      const reporter = !api && text("name") ? { name: text("name"), email: text("email") } : undefined;
      const body: Schemas["NoticeInput"] = { target, category, explanation: text("explanation"), goodFaith: true, ...(reporter ? { reporter } : {}) };
      setReceived({ ...(await dataOf((api ?? publicApi).POST("/notices", { body }))), told: Boolean(api ?? reporter) });
      return "";
    });
  };

  if (received) {
    return (
      <div class="report-received" role="status">
        <p>
          Thank you: notice <code>{received.id}</code> was received. The marketplace's operators will decide on it{received.told ? " and email you what they decided and why" : ""}.
        </p>
        {received.appealToken && (
          <p>
            Keep this token to appeal their decision: <code class="token">{received.appealToken}</code> <CopyButton text={received.appealToken} label="the appeal token" />
          </p>
        )}
      </div>
    );
  }
  if (!open) {
    return (
      <button type="button" class="link-button" aria-expanded="false" onClick={() => setOpen(true)}>
        Report illegal content<span class="visually-hidden"> in {what}</span>
      </button>
    );
  }
  return (
    <form class="stacked report-form" onSubmit={send} aria-label={`Report ${what}`}>
      <p class="muted">Tell the marketplace why {what} is illegal or breaks its terms. No account is needed.</p>
      <fieldset>
        <legend>What is wrong?</legend>
        {CATEGORIES.map(([value, explained]) => (
          <label key={value}>
            <input type="radio" name="category" value={value} checked={category === value} onChange={() => setCategory(value)} /> <strong>{CATEGORY_WORDS[value]}</strong>: {explained}
          </label>
        ))}
      </fieldset>
      <div class="field">
        <label for={field("explanation")}>Why (at least 20 characters)</label>
        <textarea id={field("explanation")} name="explanation" required minLength={20} maxLength={5000} rows={4} />
      </div>
      {!api && (
        <>
          <div class="field">
            <label for={field("name")}>Your name{category === "intellectual_property" ? "" : " (optional, with your email)"}</label>
            <input id={field("name")} name="name" maxLength={200} required={category === "intellectual_property"} autocomplete="name" />
          </div>
          <div class="field">
            <label for={field("email")}>Your email{category === "intellectual_property" ? "" : " (optional: to hear what was decided)"}</label>
            <input id={field("email")} name="email" type="email" maxLength={254} required={category === "intellectual_property"} autocomplete="email" />
          </div>
        </>
      )}
      <label class="checkbox">
        <input type="checkbox" name="goodFaith" required /> I believe, in good faith, that what I say here is accurate and complete.
      </label>
      <div class="actions">
        <button type="submit">Send report</button>
        <button type="button" class="secondary" onClick={() => setOpen(false)}>
          Cancel
        </button>
      </div>
      <ErrorMessage error={error} />
    </form>
  );
}
