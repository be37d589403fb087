import { useEffect, useState } from "preact/hooks";
import { dataOf, type Schemas, type SignedInApi } from "../api";
import { formatDate } from "../format";
import { ErrorMessage, StatusMessage } from "../ui/messages";
import { useAction } from "../ui/use-action";

type DeveloperModule = Schemas["DeveloperModules"]["items"][number];
type TrustedPublisher = Schemas["TrustedPublisher"];

const CLAIMS = [
  ["repository", "Repository", "acme/charts"],
  ["workflow_ref", "Workflow", "acme/charts/.github/workflows/release.yml@refs/heads/main"],
  ["ref", "Ref", "refs/heads/main"],
  ["environment", "Environment", "release"],
] as const;

const KNOWN_ISSUERS = ["https://token.actions.githubusercontent.com", "https://gitlab.com"];

/** A module's trusted publishers and publish policy (§15), folded away until asked for. */
export function PublishSettings({ api, module, onPolicyChanged }: { api: SignedInApi; module: DeveloperModule; onPolicyChanged: () => Promise<void> }) {
  const [open, setOpen] = useState(false);
  return (
    <details class="settings" onToggle={(event) => setOpen((event.currentTarget as HTMLDetailsElement).open)}>
      <summary>Publishing settings: trusted publishers and policy</summary>
      {open && (
        <div class="settings-body">
          <TrustedPublishers api={api} moduleId={module.id} />
          <Policy api={api} module={module} onChanged={onPolicyChanged} />
        </div>
      )}
    </details>
  );
}

function TrustedPublishers({ api, moduleId }: { api: SignedInApi; moduleId: string }) {
  const [items, setItems] = useState<TrustedPublisher[] | null>(null);
  const { error, status, run, setError } = useAction();
  const path = { params: { path: { id: moduleId } } };
  const reload = async () => setItems((await dataOf(api.GET("/developers/modules/{id}/trusted-publishers", path))).items);
  useEffect(() => {
    reload().catch(setError);
  }, [moduleId]);

  const add = (event: Event) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const form = new FormData(formElement);
    const value = (name: string) => String(form.get(name) ?? "").trim() || undefined;
    const claims = Object.fromEntries(CLAIMS.flatMap(([name]) => (value(name) ? [[name, value(name)]] : [])));
    return run(async () => {
      await dataOf(
        api.POST("/developers/modules/{id}/trusted-publishers", {
          ...path,
          body: { issuer: value("issuer") ?? "", ...(value("subject") ? { subject: value("subject") } : {}), ...(Object.keys(claims).length ? { claims } : {}) },
        }),
      );
      formElement.reset();
      await reload();
      return "Trusted publisher added.";
    });
  };
  const remove = (tpId: string) =>
    run(async () => {
      await dataOf(api.DELETE("/developers/modules/{id}/trusted-publishers/{tpId}", { params: { path: { id: moduleId, tpId } } }));
      await reload();
      return "Trusted publisher removed.";
    });

  const prefix = `tp-${moduleId}`;
  return (
    <section aria-labelledby={`${prefix}-heading`}>
      <h4 id={`${prefix}-heading`}>Trusted publishers</h4>
      <p class="muted">CI runs whose OIDC token matches may sign and publish this module without a stored secret.</p>
      {items && items.length === 0 && <p>None yet.</p>}
      {items && items.length > 0 && (
        <ul class="plain-list">
          {items.map((item) => (
            <li key={item.id}>
              <span>
                <code>{item.issuer}</code>
                {item.subject && <> · subject <code>{item.subject}</code></>}
                {Object.entries(item.claims).map(([name, claim]) => (
                  <span key={name}>
                    {" "}
                    · {name} <code>{claim}</code>
                  </span>
                ))}
                <span class="muted"> · added {formatDate(item.createdAt)}</span>
              </span>
              <button type="button" class="secondary" onClick={() => void remove(item.id)} aria-label={`Remove trusted publisher ${item.claims.repository ?? item.subject ?? item.id}`}>
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
      <form class="grid-form" onSubmit={add}>
        <div class="field">
          <label for={`${prefix}-issuer`}>Issuer</label>
          <input id={`${prefix}-issuer`} name="issuer" list={`${prefix}-issuers`} required maxLength={512} />
          <datalist id={`${prefix}-issuers`}>
            {KNOWN_ISSUERS.map((issuer) => (
              <option value={issuer} key={issuer} />
            ))}
          </datalist>
        </div>
        <div class="field">
          <label for={`${prefix}-subject`}>Subject</label>
          <input id={`${prefix}-subject`} name="subject" maxLength={512} placeholder="repo:acme/charts:environment:release" />
        </div>
        {CLAIMS.map(([name, label, example]) => (
          <div class="field" key={name}>
            <label for={`${prefix}-${name}`}>{label}</label>
            <input id={`${prefix}-${name}`} name={name} maxLength={512} placeholder={example} />
          </div>
        ))}
        <button type="submit">Add trusted publisher</button>
      </form>
      <ErrorMessage error={error} />
      <StatusMessage>{status}</StatusMessage>
    </section>
  );
}

function Policy({ api, module, onChanged }: { api: SignedInApi; module: DeveloperModule; onChanged: () => Promise<void> }) {
  const { error, status, run } = useAction();
  const save = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    return run(async () => {
      await dataOf(
        api.PUT("/developers/modules/{id}/policy", {
          params: { path: { id: module.id } },
          body: { requireTrustedPublishing: form.has("requireTrustedPublishing"), requireAuthorSignature: form.has("requireAuthorSignature") },
        }),
      );
      await onChanged();
      return "Policy saved.";
    });
  };
  const prefix = `policy-${module.id}`;
  return (
    <section aria-labelledby={`${prefix}-heading`}>
      <h4 id={`${prefix}-heading`}>Policy</h4>
      <form onSubmit={save} class="stacked">
        <div class="check">
          <input type="checkbox" id={`${prefix}-tp`} name="requireTrustedPublishing" defaultChecked={module.policy.requireTrustedPublishing} />
          <label for={`${prefix}-tp`}>Sign, publish, yank and unyank only through trusted publishing</label>
        </div>
        <div class="check">
          <input type="checkbox" id={`${prefix}-sig`} name="requireAuthorSignature" defaultChecked={module.policy.requireAuthorSignature} />
          <label for={`${prefix}-sig`}>Sign only packages signed with one of my author keys</label>
        </div>
        <button type="submit">Save policy</button>
      </form>
      <ErrorMessage error={error} />
      <StatusMessage>{status}</StatusMessage>
    </section>
  );
}
