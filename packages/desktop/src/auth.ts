import { DesktopError, offline } from "./errors";

/**
 * Who the SDK acts for: a Firebase Auth user signed in with a password or a custom token through
 * Firebase Auth's REST API (and refreshed before its ID token expires), or the app's own source
 * of ID tokens (e.g. the Firebase JS SDK's `user.getIdToken()`).
 */
export type DesktopAuth = { email: string; password: string } | { customToken: string } | { getIdToken: () => Promise<string> };

export interface FirebaseOptions {
  /** The Firebase project's Web API key. */
  apiKey: string;
  /** `host:port` of the Auth emulator (locally `127.0.0.1:9099`). */
  authEmulatorHost?: string;
}

/** An ID token this long before its expiry is refreshed first. */
const REFRESH_MARGIN_MS = 5 * 60 * 1000;

interface Session {
  idToken: string;
  refreshToken: string;
  expiresAt: number;
}

/** The ID token to send, signed in on first use and refreshed on its own. */
export function idTokenSource(auth: DesktopAuth, firebase: FirebaseOptions | undefined, fetchOnce: typeof fetch, now: () => number): () => Promise<string> {
  if ("getIdToken" in auth) return auth.getIdToken;
  if (!firebase?.apiKey) throw new DesktopError("invalid_request", "Signing in with a password or a custom token needs `firebase: { apiKey }`.");
  const host = firebase.authEmulatorHost ? `http://${firebase.authEmulatorHost}/` : "https://";
  const key = `?key=${encodeURIComponent(firebase.apiKey)}`;
  const [method, credentials] = "customToken" in auth ? ["signInWithCustomToken", { token: auth.customToken }] : ["signInWithPassword", { email: auth.email, password: auth.password }];
  let session: Promise<Session> | null = null;

  async function call(url: string, init: RequestInit): Promise<Record<string, unknown>> {
    let response: Response;
    try {
      response = await fetchOnce(`${url}${key}`, { ...init, method: "POST" });
    } catch (error) {
      throw offline("Firebase Auth cannot be reached.", error);
    }
    const body = (await response.json().catch(() => ({}))) as Record<string, unknown> & { error?: { message?: string } };
    if (!response.ok) {
      const reason = (body.error?.message ?? `HTTP ${response.status}`).split(" ")[0];
      throw new DesktopError(response.status >= 500 ? "offline" : "invalid_credentials", `Firebase Auth refused the sign-in (${reason}).`, { status: response.status });
    }
    return body;
  }
  async function signIn(): Promise<Session> {
    const answer = await call(`${host}identitytoolkit.googleapis.com/v1/accounts:${method}`, {
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ ...credentials, returnSecureToken: true }),
    });
    return { idToken: String(answer.idToken), refreshToken: String(answer.refreshToken), expiresAt: now() + Number(answer.expiresIn ?? 3600) * 1000 };
  }
  async function refresh(refreshToken: string): Promise<Session> {
    const answer = await call(`${host}securetoken.googleapis.com/v1/token`, {
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: refreshToken }).toString(),
    });
    return { idToken: String(answer.id_token), refreshToken: String(answer.refresh_token), expiresAt: now() + Number(answer.expires_in ?? 3600) * 1000 };
  }

  return async () => {
    const current = await (session ??= signIn()).catch((error: unknown) => {
      session = null;
      throw error;
    });
    if (current.expiresAt - REFRESH_MARGIN_MS > now()) return current.idToken;
    // One refresh at a time; a refresh token refused (the user disabled, the password changed) signs in again.
    session = refresh(current.refreshToken).catch(() => signIn());
    return (await session).idToken;
  };
}
