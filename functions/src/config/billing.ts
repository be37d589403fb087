import { LOCAL_STRIPE_CONNECT_WEBHOOK_SECRET, LOCAL_STRIPE_WEBHOOK_SECRET, DEFAULTS } from "./params";
import { isEmulated, type Env } from "./env";

/** Stripe's settings (§11, §17, §20): the API key and base, webhook secrets, plans, the marketplace's fee and currencies. */

/** The Stripe key and API base alone, for the operator CLI's refunds (STRIPE_SECRET_KEY, STRIPE_API_BASE). */
export const stripeSettings = (env: Env = process.env) => ({ stripeSecretKey: env.STRIPE_SECRET_KEY ?? "", apiBase: stripeApiBase(env.STRIPE_API_BASE) });

/** Where the stripe library calls: null for Stripe itself, else the local stand-in of the tests and `npm start` (STRIPE_API_BASE). */
export type StripeApiBase = { protocol: "http" | "https"; host: string; port: number } | null;

export function stripeApiBase(raw: string | undefined): StripeApiBase {
  if (!raw) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`STRIPE_API_BASE must be an absolute URL such as http://127.0.0.1:12111, got '${raw}'.`);
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || (url.pathname !== "/" && url.pathname !== "") || url.search || url.username) {
    throw new Error(`STRIPE_API_BASE must be a protocol, host and port only, got '${raw}'.`);
  }
  const protocol = url.protocol === "https:" ? "https" : "http";
  return { protocol, host: url.hostname, port: url.port ? Number(url.port) : protocol === "https" ? 443 : 80 };
}

/**
 * STRIPE_WEBHOOK_SECRET: one endpoint signing secret or several, comma-separated (§11). Stripe
 * signs a Connect endpoint's events (connected accounts', §20) with that endpoint's own secret, so
 * a deployment that sells modules lists both. Only emulated runs fall back to the well-known local
 * pair; a deployed function without any refuses every event rather than trust one anybody could
 * sign. An entry that is not a `whsec_` secret is a configuration error, never a key that no
 * event can match.
 */
export function stripeWebhookSecrets(env: Env): string[] {
  const raw = env.STRIPE_WEBHOOK_SECRET?.trim() ?? "";
  if (!raw) return isEmulated(env) ? [LOCAL_STRIPE_WEBHOOK_SECRET, LOCAL_STRIPE_CONNECT_WEBHOOK_SECRET] : [];
  const secrets = raw.split(",").map((secret) => secret.trim());
  secrets.forEach((secret, index) => {
    if (!/^whsec_[A-Za-z0-9+/=_-]+$/.test(secret)) {
      throw new Error(`STRIPE_WEBHOOK_SECRET: entry ${index + 1} of ${secrets.length} is not an endpoint signing secret (whsec_…); separate several with commas.`);
    }
  });
  return secrets;
}

/** `plan=price` pairs, comma-separated; a Map, so that a caller's plan name is never a property of Object.prototype. */
export function billingPlans(raw: string | undefined): ReadonlyMap<string, string> {
  const plans = new Map<string, string>();
  for (const pair of (raw ?? "").split(",").map((item) => item.trim()).filter(Boolean)) {
    const match = /^([a-z0-9][a-z0-9_-]{0,63})=([A-Za-z0-9_.:-]{1,200})$/.exec(pair);
    if (!match) throw new Error(`BILLING_PLANS must be plan=price pairs such as team=price_123, got '${pair}'.`);
    plans.set(match[1], match[2]);
  }
  return plans;
}

export function feeBasisPoints(raw: string | undefined): number {
  const value = raw?.trim() || DEFAULTS.marketplaceFeePercent;
  const match = /^(\d{1,3})(?:\.(\d{1,2}))?$/.exec(value);
  const basisPoints = match ? Number(match[1]) * 100 + Number((match[2] ?? "").padEnd(2, "0")) : NaN;
  if (!(basisPoints >= 0 && basisPoints <= 10_000)) throw new Error(`MARKETPLACE_FEE_PERCENT must be a percentage from 0 to 100 with at most two decimals, got '${raw}'.`);
  return basisPoints;
}

export function currencies(raw: string | undefined): readonly string[] {
  const listed = (raw ?? "").split(",").map((item) => item.trim()).filter(Boolean);
  if (listed.length === 0) return DEFAULTS.marketplaceCurrencies;
  const wrong = listed.find((code) => !/^[a-z]{3}$/.test(code));
  if (wrong !== undefined) throw new Error(`MARKETPLACE_CURRENCIES must be lowercase three-letter currency codes such as usd,eur, got '${wrong}'.`);
  return [...new Set(listed)];
}
