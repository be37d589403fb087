import { useEffect, useState } from "preact/hooks";
import { dataOf, dataUnless, type Schemas, type SignedInApi } from "../api";
import { useConfirm } from "../ui/confirm";
import { CopyButton } from "../ui/CopyButton";
import { ErrorMessage, RetryableError, StatusMessage } from "../ui/messages";
import { useAction } from "../ui/use-action";

type Policy = Schemas["Policy"];
type Rule = Schemas["PolicyRule"];
type Evaluation = Schemas["PolicyEvaluation"];

/** A rule in words, as the list and the dialogs name it. */
export const ruleText = (rule: Rule) =>
  `${rule.effect === "allow" ? "Allow" : "Block"} ${rule.module ?? `every module of ${rule.publisher}`}${rule.versions ? ` ${rule.versions}` : ""}`;

const listOf = (text: string) =>
  text
    .split(/[\s,]+/)
    .map((value) => value.trim())
    .filter(Boolean);

/**
 * Which modules a business's people may install (§26), on `/account` for owners and admins: the
 * mode, the rules (add, edit, remove, asked first), minimum versions, required modules and the
 * message, saved as one policy; "Check a module" with the rule that decides; and the business's
 * own publisher id for its private modules, with how to publish to it.
 */
export function CompanyModulesSection({ api, businessId, businessName, owns }: { api: SignedInApi; businessId: string; businessName: string; owns: boolean }) {
  const path = { params: { path: { businessId } } };
  const [policy, setPolicy] = useState<Policy | null>(null);
  const [draft, setDraft] = useState<Policy | null>(null);
  const [editing, setEditing] = useState<number | null>(null);
  const [publisher, setPublisher] = useState<Schemas["BusinessPublisher"] | null | undefined>(undefined);
  const [evaluation, setEvaluation] = useState<(Evaluation & { moduleId: string }) | null>(null);
  const [loadError, setLoadError] = useState<unknown>(null);
  const { error, status, run } = useAction();
  const { confirm, dialog } = useConfirm();
  const id = (what: string) => `${what}-${businessId}`;

  const load = () => {
    setLoadError(null);
    Promise.all([dataOf(api.GET("/businesses/{businessId}/policy", path)), dataUnless("publisher_not_found", api.GET("/businesses/{businessId}/publisher", path))]).then(([stored, own]) => {
      setPolicy(stored);
      setDraft(stored);
      setPublisher(own);
    }, setLoadError);
  };
  useEffect(load, [api, businessId]);

  if (loadError) return <RetryableError error={loadError} what="the install policy" retry={load} />;
  if (!policy || !draft) return null;
  const changed = JSON.stringify(draft) !== JSON.stringify(policy);

  const save = () =>
    run(async () => {
      const body = { mode: draft.mode, rules: draft.rules, minimumVersions: draft.minimumVersions, required: draft.required, message: draft.message };
      const saved = await dataOf(api.PUT("/businesses/{businessId}/policy", { ...path, body }));
      setPolicy(saved);
      setDraft(saved);
      return `Saved version ${saved.version} of ${businessName}'s install policy: it holds at your people's next request.`;
    });
  const submitRule = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const data = new FormData(form);
    const text = (name: string) => String(data.get(name) ?? "").trim() || undefined;
    const rule: Rule = { effect: data.get("effect") === "allow" ? "allow" : "block", publisher: text("publisher"), module: text("module"), versions: text("versions"), reason: text("reason") };
    const rules = editing === null ? [...draft.rules, rule] : draft.rules.map((existing, at) => (at === editing ? rule : existing));
    setDraft({ ...draft, rules });
    setEditing(null);
    form.reset();
  };
  const removeRule = async (at: number) => {
    const rule = draft.rules[at];
    if (!(await confirm({ title: `Remove "${ruleText(rule)}"?`, detail: "Once you save, what it decided falls to the other rules and the mode.", action: "Remove rule" }))) return;
    setDraft({ ...draft, rules: draft.rules.filter((_, index) => index !== at) });
  };
  const removeMinimum = async (moduleId: string) => {
    if (!(await confirm({ title: `Remove the minimum version of ${moduleId}?`, detail: `Once you save, versions of ${moduleId} below ${draft.minimumVersions[moduleId]} are allowed again.`, action: "Remove minimum" }))) return;
    const { [moduleId]: _removed, ...rest } = draft.minimumVersions;
    setDraft({ ...draft, minimumVersions: rest });
  };
  const addMinimum = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const data = new FormData(form);
    setDraft({ ...draft, minimumVersions: { ...draft.minimumVersions, [String(data.get("module")).trim()]: String(data.get("version")).trim() } });
    form.reset();
  };
  const check = (event: Event) => {
    event.preventDefault();
    const data = new FormData(event.currentTarget as HTMLFormElement);
    const moduleId = String(data.get("module") ?? "").trim();
    const version = String(data.get("version") ?? "").trim();
    return run(async () => {
      const answer = await dataOf(api.POST("/businesses/{businessId}/policy/evaluate", { ...path, body: { moduleId, ...(version ? { version } : {}) } }));
      setEvaluation({ ...answer, moduleId });
      return "";
    });
  };
  const claim = (event: Event) => {
    event.preventDefault();
    const publisherId = String(new FormData(event.currentTarget as HTMLFormElement).get("publisherId") ?? "").trim();
    return run(async () => {
      setPublisher(await dataOf(api.POST("/businesses/{businessId}/publisher", { ...path, body: { publisherId } })));
      return `${businessName} publishes its private modules as ${publisherId}.`;
    });
  };
  const editedRule = editing === null ? null : draft.rules[editing];

  return (
    <section aria-labelledby={id("modules")} class="company-modules">
      <h3 id={id("modules")}>Modules</h3>
      <p class="muted">
        Which modules and versions {businessName}'s people may install, and {businessName}'s own modules. See the <a href="/docs/guides/it-administrators">IT administrators' guide</a>.
      </p>
      <ErrorMessage error={error} />
      <StatusMessage>{status}</StatusMessage>

      <h4>Install policy</h4>
      <p class="muted">
        Version {policy.version}
        {policy.version === 0 ? ": never set, everything is allowed." : "."} The most specific rule decides (a module and versions, then a module, then a publisher and versions, then a publisher); at a tie, Block wins.
      </p>
      <fieldset class="policy-mode">
        <legend>Mode</legend>
        <div class="field checkbox">
          <input type="radio" id={id("mode-open")} name={id("mode")} checked={draft.mode === "open"} onChange={() => setDraft({ ...draft, mode: "open" })} />
          <label for={id("mode-open")}>Open: everything no rule blocks</label>
        </div>
        <div class="field checkbox">
          <input type="radio" id={id("mode-allowlist")} name={id("mode")} checked={draft.mode === "allowlist"} onChange={() => setDraft({ ...draft, mode: "allowlist" })} />
          <label for={id("mode-allowlist")}>Allowlist: only what a rule allows, and {businessName}'s own modules</label>
        </div>
      </fieldset>

      {draft.rules.length > 0 ? (
        <ul class="plain-list policy-rules" aria-label="Rules">
          {draft.rules.map((rule, at) => (
            <li key={`${at}-${ruleText(rule)}`}>
              <span class={`badge ${rule.effect === "allow" ? "ok" : "warn"}`}>{rule.effect === "allow" ? "Allow" : "Block"}</span> <strong class="wrap">{rule.module ?? rule.publisher}</strong>
              {rule.module && rule.publisher ? <span class="muted"> of {rule.publisher}</span> : rule.module ? null : <span class="muted"> (every module of the publisher)</span>}
              {rule.versions && <code class="wrap"> {rule.versions}</code>}
              {rule.reason && <p class="muted wrap">{rule.reason}</p>}
              <div class="button-row">
                <button type="button" class="link-button" onClick={() => setEditing(at)}>
                  Edit<span class="visually-hidden"> {ruleText(rule)}</span>
                </button>
                <button type="button" class="link-button" onClick={() => void removeRule(at)}>
                  Remove<span class="visually-hidden"> {ruleText(rule)}</span>
                </button>
              </div>
            </li>
          ))}
        </ul>
      ) : (
        <p class="muted">No rules yet.</p>
      )}
      <form onSubmit={submitRule} class="policy-rule-form" key={editing ?? "new"} aria-label={editedRule ? `Edit ${ruleText(editedRule)}` : "Add a rule"}>
        <div class="field">
          <label for={id("rule-effect")}>Effect</label>
          <select id={id("rule-effect")} name="effect" defaultValue={editedRule?.effect ?? "block"}>
            <option value="block">Block</option>
            <option value="allow">Allow</option>
          </select>
        </div>
        <div class="field">
          <label for={id("rule-module")}>Module</label>
          <input id={id("rule-module")} name="module" defaultValue={editedRule?.module ?? ""} placeholder="contoso.charts" />
        </div>
        <div class="field">
          <label for={id("rule-publisher")}>or publisher</label>
          <input id={id("rule-publisher")} name="publisher" defaultValue={editedRule?.publisher ?? ""} placeholder="contoso" />
        </div>
        <div class="field">
          <label for={id("rule-versions")}>Versions</label>
          <input id={id("rule-versions")} name="versions" defaultValue={editedRule?.versions ?? ""} placeholder="^2.1, or empty: all" />
        </div>
        <div class="field wide">
          <label for={id("rule-reason")}>Reason people see</label>
          <input id={id("rule-reason")} name="reason" maxLength={500} defaultValue={editedRule?.reason ?? ""} placeholder="2.x breaks our templates; IT is testing it." />
        </div>
        <div class="button-row">
          <button type="submit" class="secondary">{editedRule ? "Update rule" : "Add rule"}</button>
          {editedRule && (
            <button type="button" class="link-button" onClick={() => setEditing(null)}>
              Cancel editing
            </button>
          )}
        </div>
      </form>

      <h5>Minimum versions</h5>
      {Object.keys(draft.minimumVersions).length > 0 && (
        <ul class="plain-list" aria-label="Minimum versions">
          {Object.entries(draft.minimumVersions).map(([moduleId, version]) => (
            <li key={moduleId}>
              <strong class="wrap">{moduleId}</strong> from <code>{version}</code>{" "}
              <button type="button" class="link-button" onClick={() => void removeMinimum(moduleId)}>
                Remove<span class="visually-hidden"> the minimum of {moduleId}</span>
              </button>
            </li>
          ))}
        </ul>
      )}
      <form onSubmit={addMinimum} class="inline-form">
        <div class="field">
          <label for={id("minimum-module")}>Module</label>
          <input id={id("minimum-module")} name="module" required placeholder="contoso.charts" />
        </div>
        <div class="field">
          <label for={id("minimum-version")}>At least</label>
          <input id={id("minimum-version")} name="version" required placeholder="1.4.2" />
        </div>
        <button type="submit" class="secondary">Add minimum</button>
      </form>

      <div class="field">
        <label for={id("required")}>Required modules</label>
        <input id={id("required")} value={draft.required.join(", ")} onChange={(event) => setDraft({ ...draft, required: listOf((event.currentTarget as HTMLInputElement).value) })} placeholder="contoso.notes, initech.handbook" aria-describedby={id("required-help")} />
        <p id={id("required-help")} class="muted">
          The desktop app installs these for everyone.
        </p>
      </div>
      <div class="field">
        <label for={id("message")}>Message for blocked installs</label>
        <textarea id={id("message")} maxLength={500} rows={2} value={draft.message ?? ""} onInput={(event) => setDraft({ ...draft, message: (event.currentTarget as HTMLTextAreaElement).value.trim() || null })} />
      </div>
      <div class="button-row">
        <button type="button" onClick={() => void save()} disabled={!changed}>
          Save policy
        </button>
        {changed && (
          <button type="button" class="link-button" onClick={() => setDraft(policy)}>
            Discard changes
          </button>
        )}
      </div>

      <h4>Check a module</h4>
      <form onSubmit={check} class="inline-form">
        <div class="field">
          <label for={id("check-module")}>Module</label>
          <input id={id("check-module")} name="module" required placeholder="contoso.charts" />
        </div>
        <div class="field">
          <label for={id("check-version")}>Version</label>
          <input id={id("check-version")} name="version" placeholder="newest allowed" />
        </div>
        <button type="submit" class="secondary">Check</button>
      </form>
      {evaluation && (
        <p class={`message ${evaluation.allowed ? "status" : "error"}`} role="status">
          {evaluation.allowed ? `Allowed: ${evaluation.moduleId} ${evaluation.version}` : `Not allowed: ${evaluation.moduleId}${evaluation.version ? ` ${evaluation.version}` : " (no version is)"}`}
          {evaluation.rule ? `, by "${ruleText(evaluation.rule)}".` : evaluation.allowed ? `, by the ${policy.mode} mode.` : "."}
          {evaluation.reason && ` ${evaluation.reason}`}
        </p>
      )}

      <h4>{businessName}'s own modules</h4>
      {publisher ? (
        <>
          <p>
            Private modules publish as <code>{publisher.publisherId}</code>: module ids <code>{publisher.publisherId}.&lt;name&gt;</code>, seen and installed by {businessName}'s people only. Owners and admins publish them with their own developer account:
          </p>
          <p>
            <code class="wrap">npx mpkg publish ./my-module</code> <CopyButton text="npx mpkg publish ./my-module" label="the publish command" />
          </p>
        </>
      ) : owns ? (
        <form onSubmit={claim} class="inline-form">
          <div class="field">
            <label for={id("publisher")}>Publisher id for private modules</label>
            <input id={id("publisher")} name="publisherId" required pattern="[a-z][a-z0-9\-]{2,31}" placeholder="initech" aria-describedby={id("publisher-help")} />
            <p id={id("publisher-help")} class="muted">
              3–32 of a–z, 0–9 and -, starting with a letter; one per business, for good.
            </p>
          </div>
          <button type="submit">Claim</button>
        </form>
      ) : (
        <p class="muted">An owner claims a publisher id for {businessName}'s private modules.</p>
      )}
      {dialog}
    </section>
  );
}
