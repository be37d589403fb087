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
  return withDeadlines("Auth", {
    async signInWithPassword(email: string, password: string) {
      if (!options.apiKey) throw new Error("WEB_API_KEY is not configured; password sign-in is unavailable.");
      const response = await fetch(`${base}/accounts:signInWithPassword?key=${encodeURIComponent(options.apiKey)}`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ email, password, returnSecureToken: true }),
      });
      const body = (await response.json()) as {
        localId?: string;
        idToken?: string;
        refreshToken?: string;
        expiresIn?: string;
        error?: { message?: string };
      };
      if (response.ok && body.idToken && body.refreshToken && body.localId) {
        return { uid: body.localId, idToken: body.idToken, refreshToken: body.refreshToken, expiresIn: Number(body.expiresIn ?? 3600) };
      }
      const reason = (body.error?.message ?? "").split(" ")[0];
      if (INVALID_CREDENTIALS.has(reason)) throw new ApiError("invalid_credentials", "Wrong email or password.");
      if (reason === "USER_DISABLED") throw tokenError("user_disabled", "This account is disabled.");
      if (reason === "TOO_MANY_ATTEMPTS_TRY_LATER") throw rateLimited(60);
      throw new Error(`Identity Toolkit sign-in failed: HTTP ${response.status} ${reason}`);
    },
    async refresh(refreshToken: string) {
      if (!options.apiKey) throw new Error("WEB_API_KEY is not configured; token refresh is unavailable.");
      const response = await fetch(`${secureToken}/token?key=${encodeURIComponent(options.apiKey)}`, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: refreshToken }).toString(),
      });
      const body = (await response.json()) as {
        user_id?: string;
        id_token?: string;
        refresh_token?: string;
        expires_in?: string;
        error?: { message?: string };
      };
      if (response.ok && body.id_token && body.refresh_token && body.user_id) {
        return { uid: body.user_id, idToken: body.id_token, refreshToken: body.refresh_token, expiresIn: Number(body.expires_in ?? 3600) };
      }
      const reason = (body.error?.message ?? "").split(" ")[0];
      if (reason === "USER_DISABLED") throw tokenError("user_disabled", "This account is disabled.");
      if (INVALID_REFRESH.has(reason) || response.status === 400) throw tokenError("invalid_token", "The refresh token is not valid (expired, revoked or malformed); log in again.");
      throw new Error(`Secure Token refresh failed: HTTP ${response.status} ${reason}`);
    },
  });
}
