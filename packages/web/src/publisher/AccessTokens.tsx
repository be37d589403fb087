import { useEffect, useState } from "preact/hooks";
import { dataOf, type Schemas, type SignedInApi } from "../api";
import { formatDate } from "../format";
import { ErrorMessage, StatusMessage } from "../ui/messages";
import { useAction } from "../ui/use-action";
import { useConfirm } from "../ui/confirm";

/** Access tokens for CI (§12): created and shown once, listed, revoked. */
export function AccessTokens({ api }: { api: SignedInApi }) {
  const [tokens, setTokens] = useState<Schemas["AccessToken"][] | null>(null);
  // The page sends no Idempotency-Key, so its answers always carry the token.
  const [created, setCreated] = useState<{ id: string; name: string; token: string } | null>(null);
  const [copied, setCopied] = useState(false);
  const { error, status, run, setError } = useAction();
  const { confirm, dialog } = useConfirm();
  const reload = async () => setTokens((await dataOf(api.GET("/developers/tokens"))).items);
  useEffect(() => {
    reload().catch(setError);
  }, [api]);

  const create = (event: Event) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const form = new FormData(formElement);
    setCopied(false);
    return run(async () => {
      const { id, name, token } = await dataOf(api.POST("/developers/tokens", { body: { name: String(form.get("name") ?? ""), expiresInDays: Number(form.get("expiresInDays")) } }));
      setCreated(token === null ? null : { id, name, token });
      formElement.reset();
      await reload();
      return "";
    });
  };
  const revoke = async (token: Schemas["AccessToken"]) => {
    if (!(await confirm({ title: `Revoke “${token.name}”?`, detail: "Every CI job or script that uses it stops working at once; a new token must be made and put in its place.", action: "Revoke" }))) return;
    await run(async () => {
      await dataOf(api.DELETE("/developers/tokens/{id}", { params: { path: { id: token.id } } }));
      if (created?.id === token.id) setCreated(null);
      await reload();
      return `Revoked “${token.name}”.`;
    });
  };
  const copy = async () => {
    if (!created) return;
    try {
      await navigator.clipboard.writeText(created.token);
      setCopied(true);
    } catch {
      setError(new Error("The browser did not allow copying: select the token and copy it by hand."));
    }
  };

  return (
    <section aria-labelledby="tokens-heading" class="panel">
      <h2 id="tokens-heading">Access tokens</h2>
      <p class="muted">For CI and scripts: a token signs, publishes, yanks and lists your modules, nothing else.</p>
      <form class="grid-form" onSubmit={create}>
        <div class="field">
          <label for="token-name">Name</label>
          <input id="token-name" name="name" required maxLength={100} placeholder="GitHub Actions" />
        </div>
        <div class="field">
          <label for="token-days">Expires after (days)</label>
          <input id="token-days" name="expiresInDays" type="number" min={1} max={365} defaultValue="90" required />
        </div>
        <button type="submit">Create token</button>
      </form>
      {created && (
        <div class="created-token" role="region" aria-labelledby="created-token-heading">
          <h3 id="created-token-heading">New token “{created.name}”</h3>
          <p>Copy it now: it is shown this once, and only its hash is kept.</p>
          <div class="token-row">
            <label class="visually-hidden" for="created-token">
              The new token
            </label>
            <input id="created-token" class="token-value" readOnly value={created.token} onFocus={(event) => event.currentTarget.select()} />
            <button type="button" onClick={() => void copy()}>
              {copied ? "Copied" : "Copy"}
            </button>
            <button type="button" class="secondary" onClick={() => setCreated(null)}>
              Done
            </button>
          </div>
        </div>
      )}
      <ErrorMessage error={error} />
      <StatusMessage>{status}</StatusMessage>
      {tokens && tokens.length === 0 && <p>No tokens.</p>}
      {tokens && tokens.length > 0 && (
        <div class="table-scroll" tabIndex={0} role="region" aria-label="Your access tokens">
          <table class="stacked">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Created</th>
                <th scope="col">Expires</th>
                <th scope="col">Last used</th>
                <th scope="col">Action</th>
              </tr>
            </thead>
            <tbody>
              {tokens.map((token) => (
                <tr key={token.id}>
                  <th data-label="Name" scope="row">{token.name}</th>
                  <td data-label="Created">{formatDate(token.createdAt)}</td>
                  <td data-label="Expires">{formatDate(token.expiresAt)}</td>
                  <td data-label="Last used">{token.lastUsedAt ? formatDate(token.lastUsedAt) : "Never"}</td>
                  <td data-label="Action">
                    <button type="button" class="danger" aria-label={`Revoke ${token.name}`} onClick={() => void revoke(token)}>
                      Revoke
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {dialog}
    </section>
  );
}
