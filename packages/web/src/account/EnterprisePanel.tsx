import { useEffect, useState } from "preact/hooks";
import { dataOf, type Schemas, type SignedInApi } from "../api";
import { formatDate } from "../format";
import { useConfirm } from "../ui/confirm";
import { CopyButton } from "../ui/CopyButton";
import { ErrorMessage, RetryableError, StatusMessage } from "../ui/messages";
import { useAction } from "../ui/use-action";

type Sso = Schemas["SsoSettings"];
type Domain = Schemas["Domain"];
type ScimToken = Schemas["ScimToken"];

/**
 * An owner's enterprise settings (§22) on `/account`: single sign-on (provider, enforce, JIT),
 * verified domains (the TXT record to add, Verify, Remove) and SCIM (base URL, tokens made and
 * shown once, revoked after asking).
 */
export function EnterprisePanel({ api, businessId, businessName }: { api: SignedInApi; businessId: string; businessName: string }) {
  const path = { params: { path: { businessId } } };
  const [sso, setSso] = useState<Sso | null>(null);
  const [domains, setDomains] = useState<Domain[] | null>(null);
  const [tokens, setTokens] = useState<{ items: ScimToken[]; baseUrl: string } | null>(null);
  const [newToken, setNewToken] = useState<string | null>(null);
  const [loadError, setLoadError] = useState<unknown>(null);
  const { error, status, run } = useAction();
  const { confirm, dialog } = useConfirm();
  const load = () => {
    setLoadError(null);
    Promise.all([
      dataOf(api.GET("/businesses/{businessId}/sso", path)),
      dataOf(api.GET("/businesses/{businessId}/domains", path)),
      dataOf(api.GET("/businesses/{businessId}/scim/tokens", path)),
    ]).then(([storedSso, storedDomains, storedTokens]) => {
      setSso(storedSso);
      setDomains(storedDomains.items);
      setTokens(storedTokens);
    }, setLoadError);
  };
  useEffect(load, [api, businessId]);

  const saveSso = (event: Event) => {
    event.preventDefault();
    const data = new FormData(event.currentTarget as HTMLFormElement);
    const providerId = String(data.get("providerId") ?? "").trim();
    return run(async () => {
      setSso(await dataOf(api.PUT("/businesses/{businessId}/sso", { ...path, body: { providerId: providerId || null, enforce: data.get("enforce") === "on", jit: data.get("jit") === "on" } })));
      return providerId ? `Single sign-on through ${providerId} saved.` : "Single sign-on turned off.";
    });
  };
  const addDomain = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const domain = String(new FormData(form).get("domain") ?? "").trim();
    return run(async () => {
      const added = await dataOf(api.POST("/businesses/{businessId}/domains", { ...path, body: { domain } }));
      form.reset();
      setDomains((await dataOf(api.GET("/businesses/{businessId}/domains", path))).items);
      return `Add the TXT record for ${added.domain} shown below, then press Verify.`;
    });
  };
  const domainPath = (domain: string) => ({ params: { path: { businessId, domain } } });
  const verify = (domain: string) =>
    run(async () => {
      await dataOf(api.POST("/businesses/{businessId}/domains/{domain}/verify", domainPath(domain)));
      setDomains((await dataOf(api.GET("/businesses/{businessId}/domains", path))).items);
      return `${domain} is verified.`;
    });
  const removeDomain = async (domain: string) => {
    if (!(await confirm({ title: `Remove ${domain}?`, detail: "SCIM and single sign-on stop treating its people as yours; another business may then verify it.", action: "Remove" }))) return;
    await run(async () => {
      await dataOf(api.DELETE("/businesses/{businessId}/domains/{domain}", domainPath(domain)));
      setDomains((await dataOf(api.GET("/businesses/{businessId}/domains", path))).items);
      return `Removed ${domain}.`;
    });
  };
  const createToken = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const name = String(new FormData(form).get("name") ?? "").trim();
    return run(async () => {
      const created = await dataOf(api.POST("/businesses/{businessId}/scim/tokens", { ...path, body: { name } }));
      setNewToken(created.token);
      form.reset();
      setTokens(await dataOf(api.GET("/businesses/{businessId}/scim/tokens", path)));
      return `Made the SCIM token ${name}. Copy it now: it is not shown again.`;
    });
  };
  const revoke = async (token: ScimToken) => {
    if (!(await confirm({ title: `Revoke the SCIM token ${token.name}?`, detail: "Your identity provider's provisioning through it stops at once.", action: "Revoke" }))) return;
    await run(async () => {
      await dataOf(api.DELETE("/businesses/{businessId}/scim/tokens/{tokenId}", { params: { path: { businessId, tokenId: token.id } } }));
      setTokens(await dataOf(api.GET("/businesses/{businessId}/scim/tokens", path)));
      return `Revoked ${token.name}.`;
    });
  };

  return (
    <section aria-labelledby={`enterprise-${businessId}`} class="enterprise">
      <h3 id={`enterprise-${businessId}`}>Identity provider</h3>
      <p class="muted">
        Run {businessName}'s people from Okta, Microsoft Entra ID or another identity provider: see the <a href="/docs/guides/it-administrators">IT administrators' guide</a>.
      </p>
      {loadError ? <RetryableError error={loadError} what="the identity provider settings" retry={load} /> : null}
      <ErrorMessage error={error} />
      <StatusMessage>{status}</StatusMessage>

      <h4>Single sign-on</h4>
      {sso && (
        <form onSubmit={saveSso} class="enterprise-form">
          <div class="field">
            <label for={`sso-provider-${businessId}`}>Provider id</label>
            <input id={`sso-provider-${businessId}`} name="providerId" defaultValue={sso.providerId ?? ""} placeholder="saml.okta or oidc.entra" pattern="(saml|oidc)\.[a-z0-9\-]+" aria-describedby={`sso-provider-help-${businessId}`} />
            <p id={`sso-provider-help-${businessId}`} class="muted">
              A SAML or OIDC provider configured in Firebase Authentication. Leave empty for none.
            </p>
          </div>
          <div class="field checkbox">
            <input id={`sso-enforce-${businessId}`} type="checkbox" name="enforce" defaultChecked={sso.enforce} />
            <label for={`sso-enforce-${businessId}`}>Require it: members reach this business only when signed in through it (owners excepted)</label>
          </div>
          <div class="field checkbox">
            <input id={`sso-jit-${businessId}`} type="checkbox" name="jit" defaultChecked={sso.jit} />
            <label for={`sso-jit-${businessId}`}>Just-in-time membership for people of your verified domains</label>
          </div>
          <button type="submit">Save single sign-on</button>
        </form>
      )}

      <h4>Verified domains</h4>
      {domains && domains.length > 0 && (
        <ul class="plain-list domains">
          {domains.map((domain) => (
            <li key={domain.domain}>
              <strong>{domain.domain}</strong> {domain.verifiedAt ? <span class="badge ok">Verified {formatDate(domain.verifiedAt)}</span> : <span class="badge">Pending</span>}
              {!domain.verifiedAt && (
                <p class="muted">
                  Add a TXT record named <code class="wrap">{domain.txtName}</code> holding <code class="wrap">{domain.txtValue}</code> <CopyButton text={domain.txtValue} label={`the TXT value of ${domain.domain}`} />
                </p>
              )}
              <div class="button-row">
                {!domain.verifiedAt && (
                  <button type="button" onClick={() => void verify(domain.domain)}>
                    Verify<span class="visually-hidden"> {domain.domain}</span>
                  </button>
                )}
                <button type="button" class="link-button" onClick={() => void removeDomain(domain.domain)}>
                  Remove<span class="visually-hidden"> {domain.domain}</span>
                </button>
              </div>
            </li>
          ))}
        </ul>
      )}
      <form onSubmit={addDomain} class="inline-form">
        <div class="field">
          <label for={`domain-${businessId}`}>Domain</label>
          <input id={`domain-${businessId}`} name="domain" required placeholder="example.com" />
        </div>
        <button type="submit">Add domain</button>
      </form>

      <h4>SCIM provisioning</h4>
      {tokens && (
        <>
          <p>
            SCIM base URL: <code class="wrap">{tokens.baseUrl}</code> <CopyButton text={tokens.baseUrl} label="the SCIM base URL" />
          </p>
          {newToken && (
            <div class="message status secret-once" role="status">
              <p>
                SCIM token, shown only now: <code class="wrap">{newToken}</code> <CopyButton text={newToken} label="the SCIM token" />
              </p>
              <button type="button" class="link-button" onClick={() => setNewToken(null)}>
                I have stored it
              </button>
            </div>
          )}
          {tokens.items.length > 0 && (
            <ul class="plain-list scim-tokens">
              {tokens.items.map((token) => (
                <li key={token.id}>
                  <strong>{token.name}</strong> <span class="muted">made {formatDate(token.createdAt)}{token.lastUsedAt ? `, last used ${formatDate(token.lastUsedAt)}` : ", never used"}</span>{" "}
                  <button type="button" class="link-button" onClick={() => void revoke(token)}>
                    Revoke<span class="visually-hidden"> {token.name}</span>
                  </button>
                </li>
              ))}
            </ul>
          )}
          <form onSubmit={createToken} class="inline-form">
            <div class="field">
              <label for={`scim-token-${businessId}`}>Token name</label>
              <input id={`scim-token-${businessId}`} name="name" required maxLength={100} placeholder="Okta" />
            </div>
            <button type="submit">Create token</button>
          </form>
        </>
      )}
      {dialog}
    </section>
  );
}
