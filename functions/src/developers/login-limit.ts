import { createHash } from "node:crypto";

/**
 * The per-account limit on failed developer logins (API §6): at most `maxFailures` failed
 * attempts for one email in each fixed window, however many addresses they come from. Counted
 * per window in Firestore (login-attempt-store.ts), so every function instance sees the same count.
 */
export interface LoginLimit {
  maxFailures: number;
  windowMs: number;
}

export interface LoginWindow {
  /** The account's counter for the window `now` falls in. */
  key: string;
  endsAt: Date;
}

/** Keyed by a hash of the normalised email: no addresses are stored, and case does not split a count. */
export function loginWindow(email: string, limit: LoginLimit, now: Date): LoginWindow {
  const index = Math.floor(now.getTime() / limit.windowMs);
  const account = createHash("sha256").update(email.trim().toLowerCase()).digest("hex");
  return { key: `${account}-${index}`, endsAt: new Date((index + 1) * limit.windowMs) };
}

/** Seconds to wait before trying again, or null while the account may still try. */
export function retryAfterSeconds(failures: number, window: LoginWindow, limit: LoginLimit, now: Date): number | null {
  if (failures < limit.maxFailures) return null;
  return Math.max(1, Math.ceil((window.endsAt.getTime() - now.getTime()) / 1000));
}
