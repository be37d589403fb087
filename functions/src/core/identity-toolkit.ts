import { ApiError, rateLimited, tokenError } from "./errors";
import { withDeadlines } from "./deadline";

export interface PasswordSession {
  uid: string;
  idToken: string;
  refreshToken: string;
  /** Seconds until the ID token expires. */
  expiresIn: number;
}

/** Firebase Auth's password sign-in (Identity Toolkit REST), as a client app would do it. */
export interface IdentityToolkit {
  signInWithPassword(email: string, password: string): Promise<PasswordSession>;
}

const INVALID_CREDENTIALS = new Set(["EMAIL_NOT_FOUND", "INVALID_PASSWORD", "INVALID_LOGIN_CREDENTIALS", "INVALID_EMAIL"]);

export function identityToolkit(options: { apiKey: string; emulatorHost?: string }): IdentityToolkit {
  const base = options.emulatorHost
    ? `http://${options.emulatorHost}/identitytoolkit.googleapis.com/v1`
    : "https://identitytoolkit.googleapis.com/v1";
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
  });
}
