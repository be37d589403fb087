import { assertServable, configurationWarnings, DEFAULTS, LOCAL_STRIPE_CONNECT_WEBHOOK_SECRET, LOCAL_STRIPE_WEBHOOK_SECRET, loadConfig } from ".";

describe("configuration", () => {
  it("has the documented defaults", () => {
    const config = loadConfig({ GCLOUD_PROJECT: "p" });
    expect(config).toMatchObject({
      projectId: "p",
      storageBucket: "p.appspot.com",
      signedUrlTtlSeconds: DEFAULTS.signedUrlTtlSeconds,
      maxPackageBytes: 25 * 1024 * 1024,
      maxJsonBytes: 100 * 1024,
      corsOrigins: [],
      trustProxyHops: 1,
      loginLimit: { maxFailures: 10, windowMs: 900_000 },
      deadlines: { callMs: 10_000, requestMs: 30_000 },
    });
  });

  it("reads the project and bucket from FIREBASE_CONFIG, and the variables over the defaults", () => {
    const config = loadConfig({
      FIREBASE_CONFIG: JSON.stringify({ projectId: "q", storageBucket: "q.firebasestorage.app" }),
      CORS_ORIGINS: "https://a.example, https://b.example",
      BACKEND_DEADLINE_SECONDS: "3",
    });
    expect(config).toMatchObject({ projectId: "q", storageBucket: "q.firebasestorage.app", corsOrigins: ["https://a.example", "https://b.example"], deadlines: { callMs: 3000 } });
  });

  it("caps what the contract bounds: signed URLs at 15 minutes, requests at 30 s", () => {
    const config = loadConfig({ GCLOUD_PROJECT: "p", SIGNED_URL_TTL_SECONDS: "86400", REQUEST_DEADLINE_SECONDS: "600" });
    expect(config.signedUrlTtlSeconds).toBe(900);
    expect(config.deadlines.requestMs).toBe(30_000);
  });

  it("reads STRIPE_WEBHOOK_SECRET as a list (§11): the local pair on emulators, none deployed (warned at start), a malformed entry refused", () => {
    expect(loadConfig({ GCLOUD_PROJECT: "p", FIRESTORE_EMULATOR_HOST: "127.0.0.1:8080" }).stripeWebhookSecrets).toEqual([LOCAL_STRIPE_WEBHOOK_SECRET, LOCAL_STRIPE_CONNECT_WEBHOOK_SECRET]);
    const deployed = loadConfig({ GCLOUD_PROJECT: "p" });
    expect(deployed.stripeWebhookSecrets).toEqual([]);
    expect(configurationWarnings(deployed)).toEqual([expect.stringMatching(/^STRIPE_WEBHOOK_SECRET is not set/)]);
    const both = loadConfig({ GCLOUD_PROJECT: "p", STRIPE_WEBHOOK_SECRET: "whsec_platform1, whsec_connect2" });
    expect(both.stripeWebhookSecrets).toEqual(["whsec_platform1", "whsec_connect2"]);
    expect(configurationWarnings(both)).toEqual([]);
    expect(() => loadConfig({ GCLOUD_PROJECT: "p", STRIPE_WEBHOOK_SECRET: "whsec_a;whsec_b" })).toThrow(/entry 1 of 1 is not an endpoint signing secret/);
    expect(() => loadConfig({ GCLOUD_PROJECT: "p", STRIPE_WEBHOOK_SECRET: "whsec_a,,whsec_b" })).toThrow(/entry 2 of 3/);
  });

  it("reads self-serve billing and invitation emails (§17), off and on by default", () => {
    expect(loadConfig({ GCLOUD_PROJECT: "p" })).toMatchObject({ billing: { stripeSecretKey: "", apiBase: null, plans: new Map() }, invitationEmails: true });
    const config = loadConfig({ GCLOUD_PROJECT: "p", STRIPE_SECRET_KEY: "sk_test_1", STRIPE_API_BASE: "http://127.0.0.1:12111", BILLING_PLANS: "team=team_monthly, pro=price_123", INVITATION_EMAILS: "false" });
    expect(config).toMatchObject({
      billing: { stripeSecretKey: "sk_test_1", apiBase: { protocol: "http", host: "127.0.0.1", port: 12111 }, plans: new Map([["team", "team_monthly"], ["pro", "price_123"]]) },
      invitationEmails: false,
    });
  });

  it.each([
    ["BILLING_PLANS", "team"],
    ["BILLING_PLANS", "team=price 1"],
    ["STRIPE_API_BASE", "localhost:12111"],
    ["STRIPE_API_BASE", "http://127.0.0.1:12111/v1"],
    ["INVITATION_EMAILS", "yes"],
  ])("refuses %s=%s", (name, value) => {
    expect(() => loadConfig({ GCLOUD_PROJECT: "p", [name]: value })).toThrow(name);
  });

  it.each([["MAX_PACKAGE_BYTES", "0"], ["MAX_JSON_BYTES", "1.5"], ["RATE_LIMIT_PER_IP_PER_MINUTE", "many"], ["TRUST_PROXY_HOPS", "-1"]])("refuses %s=%s", (name, value) => {
    expect(() => loadConfig({ GCLOUD_PROJECT: "p", [name]: value })).toThrow(name);
  });

  it("trusts GitHub Actions' and GitLab's OIDC issuers by default, https issuers anywhere, and a loopback http issuer only on emulators", () => {
    expect(loadConfig({ GCLOUD_PROJECT: "p" }).trustedPublishing).toEqual({
      issuers: ["https://token.actions.githubusercontent.com", "https://gitlab.com"],
      audience: "marketplace",
    });
    expect(loadConfig({ GCLOUD_PROJECT: "p", TRUSTED_ISSUERS: " https://ci.example/ , ", OIDC_AUDIENCE: "market" }).trustedPublishing).toEqual({
      issuers: ["https://ci.example/"],
      audience: "market",
    });
    expect(loadConfig({ GCLOUD_PROJECT: "p", TRUSTED_ISSUERS: "", FIRESTORE_EMULATOR_HOST: "x" }).trustedPublishing.issuers).toEqual([]);
    expect(loadConfig({ GCLOUD_PROJECT: "p", FIRESTORE_EMULATOR_HOST: "x", TRUSTED_ISSUERS: "http://127.0.0.1:7788" }).trustedPublishing.issuers).toEqual(["http://127.0.0.1:7788"]);
    for (const issuer of ["http://127.0.0.1:7788", "http://ci.example", "https://u:p@ci.example", "https://ci.example/?x=1", "not a url"]) {
      expect(() => loadConfig({ GCLOUD_PROJECT: "p", TRUSTED_ISSUERS: issuer })).toThrow("TRUSTED_ISSUERS");
    }
    expect(() => loadConfig({ GCLOUD_PROJECT: "p", FIRESTORE_EMULATOR_HOST: "x", TRUSTED_ISSUERS: "http://ci.example" })).toThrow("TRUSTED_ISSUERS");
  });

  it("takes PUBLIC_BASE_URL as an https URL, defaults it to the local stack only on emulators, and is not servable without it", () => {
    expect(loadConfig({ GCLOUD_PROJECT: "p", PUBLIC_BASE_URL: "https://market.example/api/v1/" }).publicBaseUrl).toBe("https://market.example/api/v1");
    expect(loadConfig({ GCLOUD_PROJECT: "p", FIRESTORE_EMULATOR_HOST: "127.0.0.1:8080" }).publicBaseUrl).toBe("http://127.0.0.1:5001/api/v1");
    expect(loadConfig({ GCLOUD_PROJECT: "p", FUNCTIONS_EMULATOR: "true", PUBLIC_BASE_URL: "http://127.0.0.1:5002/api/v1" }).publicBaseUrl).toBe("http://127.0.0.1:5002/api/v1");
    const unset = loadConfig({ GCLOUD_PROJECT: "p" });
    expect(unset.publicBaseUrl).toBe("");
    expect(() => assertServable(unset)).toThrow(/PUBLIC_BASE_URL is not set/);
    expect(() => assertServable(loadConfig({ GCLOUD_PROJECT: "p", PUBLIC_BASE_URL: "https://market.example/api/v1" }))).not.toThrow();
    for (const bad of ["http://market.example/api/v1", "market.example/api/v1", "https://market.example/api/v1?x=1", "https://u:p@market.example/api/v1", "javascript:alert(1)"]) {
      expect(() => loadConfig({ GCLOUD_PROJECT: "p", PUBLIC_BASE_URL: bad })).toThrow(/PUBLIC_BASE_URL/);
    }
  });

  it("needs a project id", () => {
    expect(() => loadConfig({})).toThrow(/project id/);
  });
});
