import { defineInt, defineList, defineSecret, defineString } from "firebase-functions/params";
import { DAY_MS } from "./core/time";

/**
 * All configuration of the service, in one place.
 *
 * Each setting is a Firebase param (so `firebase deploy` knows and prompts for it) whose value
 * reaches the function as an environment variable of the same name; `loadConfig` reads those
 * variables with the defaults below, so production, the dev server and the tests share one
 * reading. Local runs set the variables in code (tools/start.ts, the tests' global setup) instead of .env files.
 */
export const DEFAULTS = {
  signedUrlTtlSeconds: 900,
  maxPackageBytes: 25 * 1024 * 1024,
  maxJsonBytes: 100 * 1024,
  rateLimitPerIpPerMinute: 600,
  rateLimitPerUserPerMinute: 300,
  reportsPerIpPerMinute: 6000,
  trustProxyHops: 1,
  memoryCacheSeconds: 10,
  maxConcurrentSigns: 4,
  downloadShards: 10,
  revocationCheckSeconds: 60,
  cacheMaxAgeSeconds: 60,
  cacheSMaxAgeSeconds: 300,
  loginFailuresPerAccount: 10,
  loginWindowSeconds: 15 * 60,
  backendDeadlineSeconds: 10,
  requestDeadlineSeconds: 30,
  deviceLimit: 3,
  certificateLifetimeDays: 30,
  revocationListLifetimeHours: 72,
  trustedIssuers: ["https://token.actions.githubusercontent.com", "https://gitlab.com"],
  oidcAudience: "marketplace",
  marketplaceFeePercent: "15",
  appUrlScheme: "marketplace",
  marketplaceCurrencies: ["usd", "eur", "gbp"],
} as const;

/** The Stripe webhook secrets of local runs (contract §7, §11): the platform endpoint's and the Connect endpoint's; production has a Firebase secret. */
export const LOCAL_STRIPE_WEBHOOK_SECRET = "whsec_marketplace_local";
export const LOCAL_STRIPE_CONNECT_WEBHOOK_SECRET = "whsec_marketplace_local_connect";
/**
 * The emulated runs' key for webhook secrets (§21): 32 bytes anybody can read here, never used
 * deployed (a deployed function without WEBHOOK_SECRETS_KEY refuses to create endpoints).
 */
export const LOCAL_WEBHOOK_SECRETS_KEY = Buffer.alloc(32, "marketplace-local-webhook-key").toString("base64");
/** The Standard Webhooks retry schedule after a failure, in seconds: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
export const DEFAULT_WEBHOOK_RETRY_SCHEDULE = [5, 300, 1_800, 7_200, 18_000, 36_000, 36_000];

/** No request is held open longer than this, whatever is configured. */
export const MAX_REQUEST_DEADLINE_SECONDS = 30;

/** A signed revocation list never lives longer than the contract's 7 days, whatever is configured. */
export const MAX_REVOCATION_LIST_LIFETIME_HOURS = 7 * 24;

/** Signed URLs never live longer than the contract's 15 minutes, whatever is configured. */
export const MAX_SIGNED_URL_TTL_SECONDS = 900;

export const params = {
  storageBucket: defineString("STORAGE_BUCKET", {
    default: "",
    description: "Bucket for module packages and installers; empty means the project's default bucket.",
  }),
  signedUrlTtlSeconds: defineInt("SIGNED_URL_TTL_SECONDS", {
    default: DEFAULTS.signedUrlTtlSeconds,
    description: "Lifetime of signed download URLs, in seconds (at most 900).",
  }),
  maxPackageBytes: defineInt("MAX_PACKAGE_BYTES", {
    default: DEFAULTS.maxPackageBytes,
    description: "Largest module package accepted by POST /developers/modules/sign, in bytes.",
  }),
  maxJsonBytes: defineInt("MAX_JSON_BYTES", {
    default: DEFAULTS.maxJsonBytes,
    description: "Largest JSON request body, in bytes.",
  }),
  corsOrigins: defineList("CORS_ORIGINS", {
    default: [],
    description: "Browser origins allowed to call the API (CORS); empty allows none.",
  }),
  rateLimitPerIpPerMinute: defineInt("RATE_LIMIT_PER_IP_PER_MINUTE", {
    default: DEFAULTS.rateLimitPerIpPerMinute,
    description: "Requests a client address may make per minute, per function instance.",
  }),
  rateLimitPerUserPerMinute: defineInt("RATE_LIMIT_PER_USER_PER_MINUTE", {
    default: DEFAULTS.rateLimitPerUserPerMinute,
    description: "Authenticated requests a user may make per minute, per function instance.",
  }),
  reportsPerIpPerMinute: defineInt("REPORTS_PER_IP_PER_MINUTE", {
    default: DEFAULTS.reportsPerIpPerMinute,
    description: "Update health reports (POST /updates/reports) a client address may send per minute, per instance, apart from RATE_LIMIT_PER_IP_PER_MINUTE.",
  }),
  trustProxyHops: defineInt("TRUST_PROXY_HOPS", {
    default: DEFAULTS.trustProxyHops,
    description: "Proxies in front of the function whose X-Forwarded-For is trusted for the client address.",
  }),
  revocationCheckSeconds: defineInt("REVOCATION_CHECK_SECONDS", {
    default: DEFAULTS.revocationCheckSeconds,
    description: "On reads, how long an account's disabled state and sign-out time are taken from memory (writes always ask Auth).",
  }),
  downloadShards: defineInt("DOWNLOAD_SHARDS", {
    default: DEFAULTS.downloadShards,
    description: "Counter shards per module and day: how many downloads a second one module can take (about one per shard).",
  }),
  maxConcurrentSigns: defineInt("MAX_CONCURRENT_SIGNS", {
    default: DEFAULTS.maxConcurrentSigns,
    description: "Package uploads an instance inspects at once (memory: about twice MAX_PACKAGE_BYTES each); others wait, then 503.",
  }),
  memoryCacheSeconds: defineInt("MEMORY_CACHE_SECONDS", {
    default: DEFAULTS.memoryCacheSeconds,
    description: "Longest an instance keeps catalog data (listing pages, modules, versions) in memory; service writes show within 2 s through the change feed, hand edits within this; 0 turns it off.",
  }),
  cacheMaxAgeSeconds: defineInt("CACHE_MAX_AGE_SECONDS", {
    default: DEFAULTS.cacheMaxAgeSeconds,
    description: "max-age of public answers (releases, signing keys, OpenAPI, the anonymous listing).",
  }),
  cacheSMaxAgeSeconds: defineInt("CACHE_S_MAXAGE_SECONDS", {
    default: DEFAULTS.cacheSMaxAgeSeconds,
    description: "s-maxage of public answers: how long Firebase Hosting's CDN may serve them.",
  }),
  loginFailuresPerAccount: defineInt("LOGIN_FAILURES_PER_ACCOUNT", {
    default: DEFAULTS.loginFailuresPerAccount,
    description: "Failed developer logins one account may have per window before 429, from any number of addresses.",
  }),
  loginWindowSeconds: defineInt("LOGIN_WINDOW_SECONDS", {
    default: DEFAULTS.loginWindowSeconds,
    description: "The window of LOGIN_FAILURES_PER_ACCOUNT, in seconds.",
  }),
  backendDeadlineSeconds: defineInt("BACKEND_DEADLINE_SECONDS", {
    default: DEFAULTS.backendDeadlineSeconds,
    description: "Longest wait for one call to Firestore, Storage or Auth before answering 503 unavailable.",
  }),
  requestDeadlineSeconds: defineInt("REQUEST_DEADLINE_SECONDS", {
    default: DEFAULTS.requestDeadlineSeconds,
    description: "Longest a request may spend waiting on backends, all told (at most 30).",
  }),
  publicBaseUrl: defineString("PUBLIC_BASE_URL", {
    default: "",
    description: "The API's public base URL, ending in /api/v1 (e.g. https://<site>/api/v1), for absolute links in update feeds; required when deployed (never taken from a request's Host).",
  }),
  webApiKey: defineString("WEB_API_KEY", {
    default: "",
    description: "The project's Web API key, for developer password sign-in and token refresh (Identity Toolkit, Secure Token).",
  }),
  deviceLimit: defineInt("DEVICE_LIMIT", {
    default: DEFAULTS.deviceLimit,
    description: "Devices on which one user may have one module active at once.",
  }),
  certificateLifetimeDays: defineInt("CERTIFICATE_LIFETIME_DAYS", {
    default: DEFAULTS.certificateLifetimeDays,
    description: "Longest life of an activation certificate, in days (a subscription's period end + 3 days may end it sooner).",
  }),
  revocationListLifetimeHours: defineInt("REVOCATION_LIST_LIFETIME_HOURS", {
    default: DEFAULTS.revocationListLifetimeHours,
    description: "Life of a signed revocation list (GET /revocations), in hours (at most 168); it is re-signed every hour.",
  }),
  trustedIssuers: defineList("TRUSTED_ISSUERS", {
    default: [...DEFAULTS.trustedIssuers],
    description: "OIDC issuers whose CI tokens trusted publishing accepts (POST /developers/auth/oidc): https URLs (GitHub Actions' and GitLab's by default); on emulators also http://127.0.0.1:<port>.",
  }),
  oidcAudience: defineString("OIDC_AUDIENCE", {
    default: DEFAULTS.oidcAudience,
    description: "The `aud` a CI's OIDC token must carry to be exchanged for a publish token.",
  }),
  billingPlans: defineList("BILLING_PLANS", {
    default: [],
    description: "Self-serve plans (§17) as plan=price, e.g. team=price_123 or team=team_monthly (a price id, or a lookup key); the local stack defines team.",
  }),
  stripeApiBase: defineString("STRIPE_API_BASE", {
    default: "",
    description: "Where the stripe library sends its calls (protocol, host, port); empty is Stripe's own API. Tests and the local stack point it at a local Stripe-compatible server.",
  }),
  marketplaceFeePercent: defineString("MARKETPLACE_FEE_PERCENT", {
    default: DEFAULTS.marketplaceFeePercent,
    description: "The marketplace's fee on each module sale (§20), in percent of the amount (0 to 100, at most two decimals); the rest goes to the publisher.",
  }),
  marketplaceCurrencies: defineList("MARKETPLACE_CURRENCIES", {
    default: [...DEFAULTS.marketplaceCurrencies],
    description: "The currencies a module may be priced in (§20): lowercase ISO 4217 codes.",
  }),
  appUrlScheme: defineString("APP_URL_SCHEME", {
    default: DEFAULTS.appUrlScheme,
    description: "The desktop app's URL scheme: a module page's Install opens <scheme>://install/<moduleId> (§24).",
  }),
  invitationEmails: defineString("INVITATION_EMAILS", {
    default: "true",
    description: "Whether invitations write a mail/{id} document for the Firebase Trigger Email extension (true or false).",
  }),
  operatorEmails: defineString("OPERATOR_EMAILS", {
    default: "",
    description: "Who hears of what operators must act on (the TUF root or targets expiring within 30 days, §23), comma-separated emails; mail goes through the Trigger Email extension. Empty: the ERROR log line only.",
  }),
  webhookAllowedHosts: defineString("WEBHOOK_ALLOWED_HOSTS", {
    default: "",
    description: "Hosts, as written in a URL, exempt from the webhooks' public-address rule and allowed http: (§21); none when deployed.",
  }),
  dnsResolvers: defineString("DNS_RESOLVERS", {
    default: "",
    description: "DNS servers (host:port, comma-separated) that resolve webhook hosts and domain verification records; empty: the system's resolver. Tests point it at a local server.",
  }),
  webhookRetrySchedule: defineString("WEBHOOK_RETRY_SCHEDULE", {
    default: DEFAULT_WEBHOOK_RETRY_SCHEDULE.join(","),
    description: "Seconds to wait before each retry of a failed webhook delivery, comma-separated (§21).",
  }),
  moduleSigningKeys: defineSecret("MODULE_SIGNING_KEYS"),
  webhookSecretsKey: defineSecret("WEBHOOK_SECRETS_KEY"),
  stripeWebhookSecret: defineSecret("STRIPE_WEBHOOK_SECRET"),
  stripeSecretKey: defineSecret("STRIPE_SECRET_KEY"),
  tufOnlineKey: defineSecret("TUF_ONLINE_KEY"),
};

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
  billing: { stripeSecretKey: string; apiBase: { protocol: "http" | "https"; host: string; port: number } | null; plans: ReadonlyMap<string, string> };
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
  /**
   * Webhooks (§21): the 32-byte key that encrypts endpoint secrets (empty: endpoints cannot be
   * made), the hosts exempt from the public-address rule, and the retry schedule in milliseconds.
   */
  webhooks: { secretsKey: Buffer | null; allowedHosts: string[]; retryScheduleMs: number[]; dnsResolvers: string[] };
  /** DNS servers for §22's domain verification records (the same DNS_RESOLVERS as webhook hosts); none: the system's. */
  dnsResolvers: string[];
}

type Env = Record<string, string | undefined>;

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

/** The webhooks' settings alone, for the operator CLI (WEBHOOK_SECRETS_KEY, WEBHOOK_ALLOWED_HOSTS, WEBHOOK_RETRY_SCHEDULE). */
export function webhookSettings(env: Env = process.env): Config["webhooks"] {
  return {
    secretsKey: webhookSecretsKey(env.WEBHOOK_SECRETS_KEY || (isEmulated(env) ? LOCAL_WEBHOOK_SECRETS_KEY : "")),
    allowedHosts: (env.WEBHOOK_ALLOWED_HOSTS ?? (isEmulated(env) ? "127.0.0.1,localhost" : ""))
      .split(",")
      .map((host) => host.trim().toLowerCase())
      .filter(Boolean),
    retryScheduleMs: retrySchedule(env.WEBHOOK_RETRY_SCHEDULE),
    dnsResolvers: dnsResolvers(env.DNS_RESOLVERS),
  };
}

/** `host:port` or `host` DNS servers, comma-separated; none: the system's resolver (DNS_RESOLVERS, also for the operator CLI). */
export function dnsResolvers(raw: string | undefined): string[] {
  const servers = (raw ?? "").split(",").map((item) => item.trim()).filter(Boolean);
  for (const server of servers) {
    if (!/^[0-9a-f.:[\]]+$/i.test(server)) throw new Error(`DNS_RESOLVERS must be addresses (host or host:port), comma-separated, got '${server}'.`);
  }
  return servers;
}

function webhookSecretsKey(raw: string): Buffer | null {
  if (!raw) return null;
  const key = Buffer.from(raw, "base64");
  if (key.length !== 32) throw new Error("WEBHOOK_SECRETS_KEY must be 32 random bytes in base64 (openssl rand -base64 32).");
  return key;
}

function retrySchedule(raw: string | undefined): number[] {
  if (!raw?.trim()) return DEFAULT_WEBHOOK_RETRY_SCHEDULE.map((seconds) => seconds * 1000);
  const seconds = raw.split(",").map((item) => Number(item.trim()));
  if (seconds.length === 0 || seconds.length > 20 || seconds.some((value) => !(value >= 0 && value <= 7 * 86_400))) {
    throw new Error(`WEBHOOK_RETRY_SCHEDULE must be 1-20 comma-separated numbers of seconds (0 to a week), got '${raw}'.`);
  }
  return seconds.map((value) => Math.round(value * 1000));
}

/** The Stripe key and API base alone, for the operator CLI's refunds (STRIPE_SECRET_KEY, STRIPE_API_BASE). */
export const stripeSettings = (env: Env = process.env) => ({ stripeSecretKey: env.STRIPE_SECRET_KEY ?? "", apiBase: stripeApiBase(env.STRIPE_API_BASE) });

function stripeApiBase(raw: string | undefined): Config["billing"]["apiBase"] {
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

/** `plan=price` pairs, comma-separated; a Map, so that a caller's plan name is never a property of Object.prototype. */
function billingPlans(raw: string | undefined): ReadonlyMap<string, string> {
  const plans = new Map<string, string>();
  for (const pair of (raw ?? "").split(",").map((item) => item.trim()).filter(Boolean)) {
    const match = /^([a-z0-9][a-z0-9_-]{0,63})=([A-Za-z0-9_.:-]{1,200})$/.exec(pair);
    if (!match) throw new Error(`BILLING_PLANS must be plan=price pairs such as team=price_123, got '${pair}'.`);
    plans.set(match[1], match[2]);
  }
  return plans;
}

function feeBasisPoints(raw: string | undefined): number {
  const value = raw?.trim() || DEFAULTS.marketplaceFeePercent;
  const match = /^(\d{1,3})(?:\.(\d{1,2}))?$/.exec(value);
  const basisPoints = match ? Number(match[1]) * 100 + Number((match[2] ?? "").padEnd(2, "0")) : NaN;
  if (!(basisPoints >= 0 && basisPoints <= 10_000)) throw new Error(`MARKETPLACE_FEE_PERCENT must be a percentage from 0 to 100 with at most two decimals, got '${raw}'.`);
  return basisPoints;
}

function appUrlScheme(raw: string | undefined): string {
  const scheme = raw?.trim() || DEFAULTS.appUrlScheme;
  if (!/^[a-z][a-z0-9+.-]{0,31}$/.test(scheme) || ["http", "https", "javascript", "data", "file"].includes(scheme)) {
    throw new Error(`APP_URL_SCHEME must be the desktop app's own URL scheme (lowercase letters, digits, + . -), got '${raw}'.`);
  }
  return scheme;
}

function currencies(raw: string | undefined): readonly string[] {
  const listed = (raw ?? "").split(",").map((item) => item.trim()).filter(Boolean);
  if (listed.length === 0) return DEFAULTS.marketplaceCurrencies;
  const wrong = listed.find((code) => !/^[a-z]{3}$/.test(code));
  if (wrong !== undefined) throw new Error(`MARKETPLACE_CURRENCIES must be lowercase three-letter currency codes such as usd,eur, got '${wrong}'.`);
  return [...new Set(listed)];
}

function booleanSetting(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === "") return fallback;
  if (raw === "true" || raw === "false") return raw === "true";
  throw new Error(`${name} must be true or false, got '${env[name]}'.`);
}

/** The local stack's own address (contract §7), the default of PUBLIC_BASE_URL on emulators. */
export const LOCAL_PUBLIC_BASE_URL = "http://127.0.0.1:5001/api/v1";

/**
 * Absolute links are built from configuration only: a Host header is the caller's word, and an
 * answer cached by a CDN would carry a forged one to everybody. Empty when unset outside the
 * emulators: the api function then refuses to start (assertServable).
 */
function publicBaseUrl(env: Env): string {
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

/**
 * The issuers of TRUSTED_ISSUERS, each exactly as its tokens' `iss` names it. Only https, except a loopback issuer on emulators (the tests' and the
 * local stack's own OIDC issuer): a deployed API never trusts keys fetched in the clear.
 */
function trustedIssuers(env: Env): string[] {
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

/**
 * STRIPE_WEBHOOK_SECRET: one endpoint signing secret or several, comma-separated (§11). Stripe
 * signs a Connect endpoint's events (connected accounts', §20) with that endpoint's own secret, so
 * a deployment that sells modules lists both. Only emulated runs fall back to the well-known local
 * pair; a deployed function without any refuses every event rather than trust one anybody could
 * sign. An entry that is not a `whsec_` secret is a configuration error, never a key that no
 * event can match.
 */
function stripeWebhookSecrets(env: Env): string[] {
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

function operatorEmails(raw: string | undefined): string[] {
  const emails = (raw ?? "").split(",").map((email) => email.trim()).filter(Boolean);
  emails.forEach((email, index) => {
    if (!/^[^\s@,]{1,64}@[^\s@,]{1,189}$/.test(email)) throw new Error(`OPERATOR_EMAILS: entry ${index + 1} of ${emails.length} is not an email address; separate several with commas.`);
  });
  return emails;
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

/** Whether this runs against emulators (the local stack, the tests, the Functions emulator). */
function isEmulated(env: Env): boolean {
  return env.FUNCTIONS_EMULATOR === "true" || Boolean(env.FIRESTORE_EMULATOR_HOST);
}

function positiveInt(env: Env, name: string, fallback: number): number {
  const value = nonNegativeInt(env, name, fallback);
  if (value === 0) throw new Error(`${name} must be a positive integer, got 0.`);
  return value;
}

function nonNegativeInt(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new Error(`${name} must be a whole number, got '${raw}'.`);
  }
  return value;
}

function firebaseConfig(env: Env): { projectId?: string; storageBucket?: string } {
  try {
    return env.FIREBASE_CONFIG ? JSON.parse(env.FIREBASE_CONFIG) : {};
  } catch {
    return {};
  }
}

const projectIdFromFirebaseConfig = (env: Env) => firebaseConfig(env).projectId;
const bucketFromFirebaseConfig = (env: Env) => firebaseConfig(env).storageBucket;
