import { DAY_MS } from "../core/time";
import { billingPlans, currencies, feeBasisPoints, stripeSettings, stripeWebhookSecrets, type StripeApiBase } from "./billing";
import { booleanSetting, bucketFromFirebaseConfig, nonNegativeInt, positiveInt, projectIdFromFirebaseConfig, type Env } from "./env";
import { DEFAULTS, MAX_REQUEST_DEADLINE_SECONDS, MAX_REVOCATION_LIST_LIFETIME_HOURS, MAX_SIGNED_URL_TTL_SECONDS } from "./params";
import { appUrlScheme, operatorEmails, publicBaseUrl, trustedIssuers } from "./service";
import { dnsResolvers, webhookSettings, type WebhookSettings } from "./webhooks";

export { DEFAULTS, LOCAL_STRIPE_CONNECT_WEBHOOK_SECRET, LOCAL_STRIPE_WEBHOOK_SECRET, LOCAL_WEBHOOK_SECRETS_KEY, params } from "./params";
export { stripeSettings } from "./billing";
export { LOCAL_PUBLIC_BASE_URL } from "./service";
export { dnsResolvers, webhookSettings } from "./webhooks";

/**
 * All configuration of the service, in one place.
 *
 * Each setting is a Firebase param (so `firebase deploy` knows and prompts for it) whose value
 * reaches the function as an environment variable of the same name; `loadConfig` reads those
 * variables with the defaults of params.ts, through each feature's reader (billing.ts, webhooks.ts,
 * service.ts), so production, the dev server and the tests share one
 * reading. Local runs set the variables in code (tools/start.ts, the tests' global setup) instead of .env files.
 */
export interface Config {
  projectId: string;
  storageBucket: string;
  signedUrlTtlSeconds: number;
  maxPackageBytes: number;
  maxJsonBytes: number;
  corsOrigins: string[];
  rateLimit: { perIpPerMinute: number; perUserPerMinute: number };
  /** Update health reports per client address and minute (§19), counted apart from `rateLimit`. */
  reportsPerIpPerMinute: number;
  trustProxyHops: number;
  /** On reads, how old the account state behind a token may be (core/auth.ts); 0: always fresh. */
  revocationCheckMs: number;
  /** Package uploads an instance handles at once (core/concurrency.ts). */
  maxConcurrentSigns: number;
  /** Shards per module and day of the download counters (modules/download-store.ts). */
  downloadShards: number;
  /** Longest an instance keeps catalog data in memory (core/catalog-changes.ts); 0: not at all. */
  memoryCacheMs: number;
  /** HTTP caching of public answers (core/http-cache.ts). */
  cache: { maxAgeSeconds: number; sMaxAgeSeconds: number };
  /** Failed developer logins per account and window (developers/login-limit.ts). */
  loginLimit: { maxFailures: number; windowMs: number };
  /** Deadlines of backend calls, in milliseconds (core/deadline.ts). */
  deadlines: { callMs: number; requestMs: number };
  /** The API's public base URL for absolute links (update feeds); never a request's Host. */
  publicBaseUrl: string;
  /** Identity Toolkit: the Web API key, and the emulator host when one is used. */
  identityToolkit: { apiKey: string; emulatorHost?: string };
  /** Devices per user and module, and the longest certificate life (activations/). */
  activations: { deviceLimit: number; certificateLifetimeSeconds: number };
  /** How long a signed revocation list (revocations/) is valid, in milliseconds. */
  revocationListLifetimeMs: number;
  /** Trusted publishing (trusted-publishing/): the OIDC issuers accepted, and the audience their tokens must name. */
  trustedPublishing: { issuers: string[]; audience: string };
  /** JSON of the module-signing key set (see core/signing.ts). */
  moduleSigningKeys: string;
  /** The TUF repository's online key(s), PKCS#8 PEM (tuf/keys.ts); empty: the repository's changes wait. */
  tufOnlineKey: string;
  /** Verifies Stripe's webhook signatures (billing/); empty refuses every event. */
  /** Every endpoint signing secret an event may be signed with (§11): the platform endpoint's and the Connect endpoint's, during a roll also the old ones. */
  stripeWebhookSecrets: string[];
  /**
   * Self-serve billing (§17): the Stripe secret key (empty: 503 billing_not_configured), where the
   * stripe library calls (null: Stripe itself), and the plans a business may buy, each a price id
   * or a lookup key.
   */
  billing: { stripeSecretKey: string; apiBase: StripeApiBase; plans: ReadonlyMap<string, string> };
  /**
   * Paid modules (§20): the marketplace's fee in basis points (15 % is 1500, so that the fee of
   * a sale is exact integer arithmetic), and the currencies a price may be in.
   */
  payments: { feeBasisPoints: number; currencies: readonly string[] };
  /** The desktop app's URL scheme, for a module page's Install link (§24). */
  appUrlScheme: string;
  /** Whether invitations write a mail document for the Trigger Email extension. */
  invitationEmails: boolean;
  /** Operators to email about what they must act on (OPERATOR_EMAILS): the TUF root or targets expiring soon (§23). */
  operatorEmails: string[];
  /** Webhooks (§21): see WebhookSettings. */
  webhooks: WebhookSettings;
  /** DNS servers for §22's domain verification records (the same DNS_RESOLVERS as webhook hosts); none: the system's. */
  dnsResolvers: string[];
}

export function loadConfig(env: Env = process.env): Config {
  const projectId = env.GCLOUD_PROJECT ?? env.GOOGLE_CLOUD_PROJECT ?? projectIdFromFirebaseConfig(env);
  if (!projectId) throw new Error("No project id: set GCLOUD_PROJECT.");
  return {
    projectId,
    storageBucket: env.STORAGE_BUCKET || bucketFromFirebaseConfig(env) || `${projectId}.appspot.com`,
    signedUrlTtlSeconds: Math.min(
      positiveInt(env, "SIGNED_URL_TTL_SECONDS", DEFAULTS.signedUrlTtlSeconds),
      MAX_SIGNED_URL_TTL_SECONDS,
    ),
    maxPackageBytes: positiveInt(env, "MAX_PACKAGE_BYTES", DEFAULTS.maxPackageBytes),
    maxJsonBytes: positiveInt(env, "MAX_JSON_BYTES", DEFAULTS.maxJsonBytes),
    corsOrigins: (env.CORS_ORIGINS ?? "")
      .split(",")
      .map((origin) => origin.trim())
      .filter(Boolean),
    rateLimit: {
      perIpPerMinute: positiveInt(env, "RATE_LIMIT_PER_IP_PER_MINUTE", DEFAULTS.rateLimitPerIpPerMinute),
      perUserPerMinute: positiveInt(env, "RATE_LIMIT_PER_USER_PER_MINUTE", DEFAULTS.rateLimitPerUserPerMinute),
    },
    reportsPerIpPerMinute: positiveInt(env, "REPORTS_PER_IP_PER_MINUTE", DEFAULTS.reportsPerIpPerMinute),
    trustProxyHops: nonNegativeInt(env, "TRUST_PROXY_HOPS", DEFAULTS.trustProxyHops),
    revocationCheckMs: nonNegativeInt(env, "REVOCATION_CHECK_SECONDS", DEFAULTS.revocationCheckSeconds) * 1000,
    maxConcurrentSigns: positiveInt(env, "MAX_CONCURRENT_SIGNS", DEFAULTS.maxConcurrentSigns),
    downloadShards: positiveInt(env, "DOWNLOAD_SHARDS", DEFAULTS.downloadShards),
    memoryCacheMs: nonNegativeInt(env, "MEMORY_CACHE_SECONDS", DEFAULTS.memoryCacheSeconds) * 1000,
    cache: {
      maxAgeSeconds: nonNegativeInt(env, "CACHE_MAX_AGE_SECONDS", DEFAULTS.cacheMaxAgeSeconds),
      sMaxAgeSeconds: nonNegativeInt(env, "CACHE_S_MAXAGE_SECONDS", DEFAULTS.cacheSMaxAgeSeconds),
    },
    loginLimit: {
      maxFailures: positiveInt(env, "LOGIN_FAILURES_PER_ACCOUNT", DEFAULTS.loginFailuresPerAccount),
      windowMs: positiveInt(env, "LOGIN_WINDOW_SECONDS", DEFAULTS.loginWindowSeconds) * 1000,
    },
    deadlines: {
      callMs: positiveInt(env, "BACKEND_DEADLINE_SECONDS", DEFAULTS.backendDeadlineSeconds) * 1000,
      requestMs: Math.min(positiveInt(env, "REQUEST_DEADLINE_SECONDS", DEFAULTS.requestDeadlineSeconds), MAX_REQUEST_DEADLINE_SECONDS) * 1000,
    },
    publicBaseUrl: publicBaseUrl(env),
    identityToolkit: {
      apiKey: env.WEB_API_KEY || (env.FIREBASE_AUTH_EMULATOR_HOST ? "emulator-api-key" : ""),
      emulatorHost: env.FIREBASE_AUTH_EMULATOR_HOST || undefined,
    },
    activations: {
      deviceLimit: positiveInt(env, "DEVICE_LIMIT", DEFAULTS.deviceLimit),
      certificateLifetimeSeconds: (positiveInt(env, "CERTIFICATE_LIFETIME_DAYS", DEFAULTS.certificateLifetimeDays) * DAY_MS) / 1000,
    },
    revocationListLifetimeMs:
      Math.min(positiveInt(env, "REVOCATION_LIST_LIFETIME_HOURS", DEFAULTS.revocationListLifetimeHours), MAX_REVOCATION_LIST_LIFETIME_HOURS) * 3_600_000,
    trustedPublishing: {
      issuers: trustedIssuers(env),
      audience: env.OIDC_AUDIENCE?.trim() || DEFAULTS.oidcAudience,
    },
    moduleSigningKeys: env.MODULE_SIGNING_KEYS ?? "",
    tufOnlineKey: env.TUF_ONLINE_KEY ?? "",
    stripeWebhookSecrets: stripeWebhookSecrets(env),
    billing: { ...stripeSettings(env), plans: billingPlans(env.BILLING_PLANS) },
    payments: { feeBasisPoints: feeBasisPoints(env.MARKETPLACE_FEE_PERCENT), currencies: currencies(env.MARKETPLACE_CURRENCIES) },
    appUrlScheme: appUrlScheme(env.APP_URL_SCHEME),
    invitationEmails: booleanSetting(env, "INVITATION_EMAILS", true),
    operatorEmails: operatorEmails(env.OPERATOR_EMAILS),
    webhooks: webhookSettings(env),
    dnsResolvers: dnsResolvers(env.DNS_RESOLVERS),
  };
}

/** What a deployed instance can serve without but an operator must hear about at once, one log line each. */
export function configurationWarnings(config: Config): string[] {
  return config.stripeWebhookSecrets.length === 0 ? ["STRIPE_WEBHOOK_SECRET is not set: every Stripe event is refused (400 invalid_signature) until it is."] : [];
}

/** What the API cannot serve without, checked before a deployed instance takes its first request. */
export function assertServable(config: Config): void {
  if (!config.publicBaseUrl) {
    throw new Error("PUBLIC_BASE_URL is not set: the API builds the absolute links of its update feeds from it (e.g. https://<site>/api/v1).");
  }
}

