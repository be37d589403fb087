import { ApiError, rateLimited, tokenError } from "./errors";
import { withDeadlines } from "./deadline";

export interface PasswordSession {
  uid: string;
  idToken: string;
  refreshToken: string;
  /** Seconds until the ID token expires. */
  expiresIn: number;
}

/** Firebase Auth's password sign-in and token refresh (Identity Toolkit and Secure Token REST), as a client app would do them. */
export interface IdentityToolkit {
  signInWithPassword(email: string, password: string): Promise<PasswordSession>;
  /** A new ID token (and refresh token) for a refresh token; 401 invalid_token when it is not valid. */
  refresh(refreshToken: string): Promise<PasswordSession>;
}

/** Secure Token's refusals of a refresh token that is not (or no longer) good. */
const INVALID_REFRESH = new Set(["INVALID_REFRESH_TOKEN", "TOKEN_EXPIRED", "USER_NOT_FOUND", "MISSING_REFRESH_TOKEN", "INVALID_ARGUMENT"]);

const INVALID_CREDENTIALS = new Set(["EMAIL_NOT_FOUND", "INVALID_PASSWORD", "INVALID_LOGIN_CREDENTIALS", "INVALID_EMAIL"]);

export function identityToolkit(options: { apiKey: string; emulatorHost?: string }): IdentityToolkit {
  const host = options.emulatorHost ? `http://${options.emulatorHost}/` : "https://";
  const base = `${host}identitytoolkit.googleapis.com/v1`;
  const secureToken = `${host}securetoken.googleapis.com/v1`;
  /** POSTs to a Google identity endpoint with the API key; the answer, and its error reason (e.g. "INVALID_PASSWORD"). */
  async function post<T>(url: string, what: string, init: { contentType: string; body: string }) {
    if (!options.apiKey) throw new Error(`WEB_API_KEY is not configured; ${what} is unavailable.`);
    const response = await fetch(`${url}?key=${encodeURIComponent(options.apiKey)}`, {
      method: "POST",
      headers: { "Content-Type": init.contentType },
      body: init.body,
    });
    const body = (await response.json()) as Partial<T> & { error?: { message?: string } };
    return { response, body, reason: (body.error?.message ?? "").split(" ")[0] };
  }

  return withDeadlines("Auth", {
    async signInWithPassword(email: string, password: string) {
      const { response, body, reason } = await post<{ localId: string; idToken: string; refreshToken: string; expiresIn: string }>(
        `${base}/accounts:signInWithPassword`,
        "password sign-in",
        { contentType: "application/json", body: JSON.stringify({ email, password, returnSecureToken: true }) },
      );
      if (response.ok && body.idToken && body.refreshToken && body.localId) {
        return { uid: body.localId, idToken: body.idToken, refreshToken: body.refreshToken, expiresIn: Number(body.expiresIn ?? 3600) };
      }
      if (INVALID_CREDENTIALS.has(reason)) throw new ApiError("invalid_credentials", "Wrong email or password.");
      if (reason === "USER_DISABLED") throw tokenError("user_disabled", "This account is disabled.");
      if (reason === "TOO_MANY_ATTEMPTS_TRY_LATER") throw rateLimited(60);
      throw new Error(`Identity Toolkit sign-in failed: HTTP ${response.status} ${reason}`);
    },
    async refresh(refreshToken: string) {
      const { response, body, reason } = await post<{ user_id: string; id_token: string; refresh_token: string; expires_in: string }>(
        `${secureToken}/token`,
        "token refresh",
        { contentType: "application/x-www-form-urlencoded", body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: refreshToken }).toString() },
      );
      if (response.ok && body.id_token && body.refresh_token && body.user_id) {
        return { uid: body.user_id, idToken: body.id_token, refreshToken: body.refresh_token, expiresIn: Number(body.expires_in ?? 3600) };
      }
      if (reason === "USER_DISABLED") throw tokenError("user_disabled", "This account is disabled.");
      if (INVALID_REFRESH.has(reason) || response.status === 400) throw tokenError("invalid_token", "The refresh token is not valid (expired, revoked or malformed); log in again.");
      throw new Error(`Secure Token refresh failed: HTTP ${response.status} ${reason}`);
    },
  });
}
