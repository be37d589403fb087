import { defineInt, defineList, defineSecret, defineString } from "firebase-functions/params";

/**
 * Every setting as a Firebase param (so `firebase deploy` knows and prompts for it), with its
 * default and the local stack's values; config/index.ts reads them (loadConfig).
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
