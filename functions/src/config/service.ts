import { DEFAULTS } from "./params";
import { isEmulated, type Env } from "./env";

/** The service's own addresses and who it trusts and tells: its public base URL, the app's URL scheme, trusted OIDC issuers, operators' emails. */

/** The local stack's own address (contract §7), the default of PUBLIC_BASE_URL on emulators. */
export const LOCAL_PUBLIC_BASE_URL = "http://127.0.0.1:5001/api/v1";

/**
 * Absolute links are built from configuration only: a Host header is the caller's word, and an
 * answer cached by a CDN would carry a forged one to everybody. Empty when unset outside the
 * emulators: the api function then refuses to start (assertServable).
 */
export function publicBaseUrl(env: Env): string {
  const raw = env.PUBLIC_BASE_URL || (isEmulated(env) ? LOCAL_PUBLIC_BASE_URL : "");
  if (!raw) return "";
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`PUBLIC_BASE_URL must be an absolute URL, got '${raw}'.`);
  }
  const secure = url.protocol === "https:" || (url.protocol === "http:" && isEmulated(env));
  if (!secure || url.search || url.hash || url.username || url.password) {
    throw new Error(`PUBLIC_BASE_URL must be an https URL with no query, fragment or credentials (http only on emulators), got '${raw}'.`);
  }
  return url.href.replace(/\/+$/, "");
}

export function appUrlScheme(raw: string | undefined): string {
  const scheme = raw?.trim() || DEFAULTS.appUrlScheme;
  if (!/^[a-z][a-z0-9+.-]{0,31}$/.test(scheme) || ["http", "https", "javascript", "data", "file"].includes(scheme)) {
    throw new Error(`APP_URL_SCHEME must be the desktop app's own URL scheme (lowercase letters, digits, + . -), got '${raw}'.`);
  }
  return scheme;
}

/**
 * The issuers of TRUSTED_ISSUERS, each exactly as its tokens' `iss` names it. Only https, except a loopback issuer on emulators (the tests' and the
 * local stack's own OIDC issuer): a deployed API never trusts keys fetched in the clear.
 */
export function trustedIssuers(env: Env): string[] {
  const raw = env.TRUSTED_ISSUERS === undefined ? DEFAULTS.trustedIssuers.join(",") : env.TRUSTED_ISSUERS;
  return raw
    .split(",")
    .map((issuer) => issuer.trim())
    .filter(Boolean)
    .map((issuer) => {
      let url: URL;
      try {
        url = new URL(issuer);
      } catch {
        throw new Error(`TRUSTED_ISSUERS: '${issuer}' is not an absolute URL.`);
      }
      const loopback = url.protocol === "http:" && ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname) && isEmulated(env);
      if ((url.protocol !== "https:" && !loopback) || url.search || url.hash || url.username || url.password) {
        throw new Error(`TRUSTED_ISSUERS: '${issuer}' must be an https URL without query, fragment or credentials (http://127.0.0.1:<port> only on emulators).`);
      }
      return issuer;
    });
}

export function operatorEmails(raw: string | undefined): string[] {
  const emails = (raw ?? "").split(",").map((email) => email.trim()).filter(Boolean);
  emails.forEach((email, index) => {
    if (!/^[^\s@,]{1,64}@[^\s@,]{1,189}$/.test(email)) throw new Error(`OPERATOR_EMAILS: entry ${index + 1} of ${emails.length} is not an email address; separate several with commas.`);
  });
  return emails;
}
