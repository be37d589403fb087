import { createRemoteJWKSet, decodeJwt, errors, jwtVerify, type JWTVerifyGetKey } from "jose";
import { withinDeadline } from "../core/deadline";
import { tokenError, unavailable } from "../core/errors";
import { memo } from "../core/memo";
import type { OidcClaims } from "./claims";

/**
 * Verifies CI OIDC ID tokens (contract §15) against their issuer's keys: the issuer must be one
 * of TRUSTED_ISSUERS; its keys are found through its discovery document and fetched with jose's
 * remote JWK set, which keeps them and fetches again (at most every 30 s) when a token names a key
 * it does not know, so an issuer's key rotation needs nothing from us.
 */
export interface OidcVerifier {
  verify(token: string): Promise<OidcClaims>;
}

export interface OidcSettings {
  issuers: string[];
  audience: string;
}

/** How long an issuer's discovery document (and so its JWKS location) is kept. */
const DISCOVERY_TTL_MS = 60 * 60 * 1000;
/** How long fetched keys are used before they are fetched again, even when every token's key is known. */
const JWKS_MAX_AGE_MS = 10 * 60 * 1000;
const ALGORITHMS = ["RS256", "ES256"];

export function oidcVerifier(settings: OidcSettings, clock: () => Date, callMs: number): OidcVerifier {
  const keySets = memo<JWTVerifyGetKey>({ ttlMs: DISCOVERY_TTL_MS, maxEntries: 64 });
  const refused = (why: string) => tokenError("invalid_token", `The OIDC token ${why}.`);

  const discover = async (issuer: string): Promise<JWTVerifyGetKey> => {
    const where = `${issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`;
    const document = await withinDeadline(
      "OIDC discovery",
      fetch(where, { signal: AbortSignal.timeout(callMs), redirect: "error", headers: { accept: "application/json" } }).then(async (response) => {
        if (!response.ok) throw new Error(`${where} answered ${response.status}`);
        return (await response.json()) as { issuer?: unknown; jwks_uri?: unknown };
      }),
    ).catch((error: Error) => {
      throw unavailable(`The OIDC issuer ${issuer} could not be reached (${error.message}); retry later.`, 30);
    });
    if (document.issuer !== issuer || typeof document.jwks_uri !== "string") {
      throw unavailable(`The discovery document of ${issuer} names another issuer or no jwks_uri.`, 30);
    }
    const jwksUri = new URL(document.jwks_uri);
    // Keys travel as securely as the issuer itself: https, or the same loopback origin as an emulated issuer.
    if (jwksUri.protocol !== "https:" && jwksUri.origin !== new URL(issuer).origin) {
      throw unavailable(`The JWKS of ${issuer} is not served over https.`, 30);
    }
    return createRemoteJWKSet(jwksUri, { timeoutDuration: callMs, cooldownDuration: 30_000, cacheMaxAge: JWKS_MAX_AGE_MS });
  };

  return {
    async verify(token) {
      let issuer: unknown;
      try {
        issuer = decodeJwt(token).iss;
      } catch {
        throw refused("is not a JWT");
      }
      if (typeof issuer !== "string" || !settings.issuers.includes(issuer)) {
        throw refused(`comes from an issuer this marketplace does not trust (${JSON.stringify(issuer ?? null)})`);
      }
      const keys = await keySets.get(issuer, () => discover(issuer));
      try {
        const { payload } = await jwtVerify(token, keys, {
          issuer,
          audience: settings.audience,
          algorithms: ALGORITHMS,
          requiredClaims: ["sub", "exp"],
          currentDate: clock(),
        });
        return payload as OidcClaims;
      } catch (error) {
        throw verificationProblem(error, settings.audience, refused);
      }
    },
  };
}

function verificationProblem(error: unknown, audience: string, refused: (why: string) => Error): unknown {
  if (error instanceof errors.JWTExpired) return refused("has expired");
  if (error instanceof errors.JWTClaimValidationFailed) {
    return error.claim === "aud" ? refused(`is not for this marketplace (aud must be '${audience}')`) : refused(`has an unacceptable '${error.claim}' claim (${error.reason})`);
  }
  if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys) return refused("is signed with a key its issuer does not publish");
  if (error instanceof errors.JOSEAlgNotAllowed) return refused(`is not signed with ${ALGORITHMS.join(" or ")}`);
  if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid) return unavailable("The OIDC issuer's keys could not be fetched; retry later.", 30);
  if (error instanceof errors.JOSEError) return refused(`does not verify (${error.code})`);
  // jose's remote key set fails with Node's own errors when the issuer's keys cannot be fetched.
  return unavailable("The OIDC issuer's keys could not be fetched; retry later.", 30);
}
