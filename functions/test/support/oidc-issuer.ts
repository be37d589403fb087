/**
 * A CI's OIDC issuer on loopback, for trusted publishing's tests (and `npm start` checks): a
 * discovery document and a JWKS over plain HTTP on 127.0.0.1, and ID tokens signed with its RS256
 * and ES256 keys (or with a key it does not publish). Nothing here needs the internet.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload, type KeyLike } from "jose";

export interface TokenOptions {
  alg?: "RS256" | "ES256";
  /** Sign with a key the issuer does not publish. */
  unknownKey?: boolean;
  audience?: string;
  issuer?: string;
  /** Seconds from now; negative: expired. */
  expiresIn?: number;
  notBefore?: number;
}

export interface OidcIssuer {
  url: string;
  /** How often its JWKS has been fetched. */
  jwksFetches(): number;
  token(claims: JWTPayload & { sub: string }, options?: TokenOptions): Promise<string>;
  close(): Promise<void>;
}

/** GitHub Actions' claims for a run of `repository`'s release workflow on main. */
export function githubClaims(repository: string, overrides: Record<string, unknown> = {}) {
  return {
    sub: `repo:${repository}:ref:refs/heads/main`,
    repository,
    repository_owner: repository.split("/")[0],
    workflow_ref: `${repository}/.github/workflows/release.yml@refs/heads/main`,
    ref: "refs/heads/main",
    sha: "3f786850e387550fdab836ed7e6dc881de23001b",
    run_id: "8231451",
    ...overrides,
  };
}

export async function startOidcIssuer(port = 0): Promise<OidcIssuer> {
  const keys: Record<"RS256" | "ES256", { privateKey: KeyLike; publicKey: KeyLike; kid: string }> = {
    RS256: { ...(await generateKeyPair("RS256")), kid: "rsa-1" },
    ES256: { ...(await generateKeyPair("ES256")), kid: "ec-1" },
  };
  const stranger = await generateKeyPair("RS256");
  const jwks = { keys: await Promise.all(Object.entries(keys).map(async ([alg, key]) => ({ ...(await exportJWK(key.publicKey)), kid: key.kid, alg, use: "sig" }))) };
  let fetches = 0;
  let url = "";
  const server: Server = createServer((req, res) => {
    const send = (status: number, body: unknown) => void res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    if (req.url === "/.well-known/openid-configuration") send(200, { issuer: url, jwks_uri: `${url}/jwks`, id_token_signing_alg_values_supported: ["RS256", "ES256"] });
    else if (req.url === "/jwks") {
      fetches += 1;
      send(200, jwks);
    } else send(404, { error: "not found" });
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    jwksFetches: () => fetches,
    async token(claims, options = {}) {
      const alg = options.alg ?? "RS256";
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT(claims)
        .setProtectedHeader({ alg, kid: options.unknownKey ? "rsa-unknown" : keys[alg].kid, typ: "JWT" })
        .setIssuer(options.issuer ?? url)
        .setAudience(options.audience ?? "marketplace")
        .setIssuedAt(now)
        .setNotBefore(now + (options.notBefore ?? 0))
        .setExpirationTime(now + (options.expiresIn ?? 300))
        .sign(options.unknownKey ? stranger.privateKey : keys[alg].privateKey);
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
