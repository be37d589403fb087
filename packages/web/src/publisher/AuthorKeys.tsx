import { useEffect, useState } from "preact/hooks";
import { dataOf, type Schemas, type SignedInApi } from "../api";
import { formatDate } from "../format";
import { ErrorMessage, StatusMessage } from "../ui/messages";
import { useAction } from "../ui/use-action";

/** Author keys (§15): Ed25519 public keys whose signatures packages may carry. */
export function AuthorKeys({ api }: { api: SignedInApi }) {
  const [keys, setKeys] = useState<Schemas["AuthorKey"][] | null>(null);
  const { error, status, run, setError } = useAction();
  const reload = async () => setKeys((await dataOf(api.GET("/developers/keys"))).items);
  useEffect(() => {
    reload().catch(setError);
  }, [api]);

  const add = (event: Event) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const form = new FormData(formElement);
    return run(async () => {
      let publicKey: Schemas["Ed25519PublicJwk"];
      try {
        publicKey = JSON.parse(String(form.get("publicKey") ?? ""));
      } catch {
        throw new Error("The public key must be a JWK in JSON, as `mpkg keys generate` prints it.");
      }
      await dataOf(api.POST("/developers/keys", { body: { name: String(form.get("name") ?? ""), publicKey } }));
      formElement.reset();
      await reload();
      return "Key added.";
    });
  };
  const revoke = (key: Schemas["AuthorKey"]) =>
    run(async () => {
      await dataOf(api.DELETE("/developers/keys/{kid}", { params: { path: { kid: key.kid } } }));
      await reload();
      return `Revoked “${key.name}”.`;
    });

  return (
    <section aria-labelledby="keys-heading" class="panel">
      <h2 id="keys-heading">Author keys</h2>
      <p class="muted">
        Sign packages yourself on top of the marketplace's signature. Make a key with <code>npx mpkg keys generate</code> and paste its public half here.
      </p>
      <ErrorMessage error={error} />
      <StatusMessage>{status}</StatusMessage>
      {keys && keys.length === 0 && <p>No keys.</p>}
      {keys && keys.length > 0 && (
        <ul class="plain-list">
          {keys.map((key) => (
            <li key={key.kid}>
              <span>
                <strong>{key.name}</strong> <code class="kid">{key.kid}</code>
                <span class="muted">
                  {" "}
                  · added {formatDate(key.createdAt)}
                  {key.revokedAt && ` · revoked ${formatDate(key.revokedAt)}`}
                </span>
              </span>
              {!key.revokedAt && (
                <button type="button" class="danger" aria-label={`Revoke key ${key.name}`} onClick={() => void revoke(key)}>
                  Revoke
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      <form class="stacked" onSubmit={add}>
        <div class="field">
          <label for="key-name">Name</label>
          <input id="key-name" name="name" required maxLength={100} placeholder="release laptop" />
        </div>
        <div class="field">
          <label for="key-public">Public key (JWK)</label>
          <textarea id="key-public" name="publicKey" required rows={3} placeholder='{"kty":"OKP","crv":"Ed25519","x":"…"}' />
        </div>
        <button type="submit">Add key</button>
      </form>
    </section>
  );
}
