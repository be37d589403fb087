import { compactVerify, createLocalJWKSet, decodeJwt, type JSONWebKeySet } from "jose";
import request from "supertest";
import { modulePackage } from "./support/packages";
import { githubClaims, startOidcIssuer, type OidcIssuer } from "./support/oidc-issuer";
import { bearer, createDeveloper, createUser, expectProblem, publishModule, resetEmulators, testApp, testDeps, type TestDeveloper } from "./support/harness";

const asBearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const REPOSITORY = "acme/charts";

/** Contract §15: CI proves who it is with its OIDC token; no long-lived secret sits in CI. */
describe("trusted publishing", () => {
  let issuer: OidcIssuer;
  let acme: TestDeveloper;
  const app = (options: { clock?: () => Date } = {}) => testApp({ ...options, config: { trustedPublishing: { issuers: [issuer.url], audience: "marketplace" } } });

  beforeAll(async () => {
    issuer = await startOidcIssuer();
  });
  afterAll(() => issuer.close());
  beforeEach(async () => {
    await resetEmulators();
    acme = await createDeveloper("acme");
    await publishModule(acme, { id: "acme.charts", name: "Charts", version: "1.0.0", summary: "Charts." });
    await publishModule(acme, { id: "acme.notes", name: "Notes", version: "1.0.0", summary: "Notes." });
  });

  const trust = async (moduleId: string, body: object, who: { idToken: string } = acme) =>
    request(await app()).post(`/api/v1/developers/modules/${moduleId}/trusted-publishers`).set(bearer(who)).send(body);
  const exchange = async (token: string) => request(await app()).post("/api/v1/developers/auth/oidc").send({ token });
  const sign = async (token: string, manifest: Record<string, unknown>) =>
    request(await app()).post("/api/v1/developers/modules/sign").set(asBearer(token)).set("Content-Type", "application/octet-stream").send(await modulePackage(manifest));
  const publish = async (token: string, moduleId: string, version: string) =>
    request(await app()).post("/api/v1/developers/modules/publish").set(asBearer(token)).send({ moduleId, version });
  const publishToken = async (claims = githubClaims(REPOSITORY)) => {
    const response = await exchange(await issuer.token(claims));
    expect(response.status).toBe(200);
    return response.body as { token: string; expiresAt: string; moduleIds: string[] };
  };

  describe("trusted publishers of a module", () => {
    it("are added, listed and removed by the owner with an ID token, and audited", async () => {
      const added = await trust("acme.charts", { issuer: issuer.url, claims: { repository: REPOSITORY, ref: "refs/heads/main" } });
      expect(added.status).toBe(201);
      expect(added.body).toEqual({ id: expect.stringMatching(/^tp_/), issuer: issuer.url, subject: null, claims: { repository: REPOSITORY, ref: "refs/heads/main" }, createdAt: expect.any(String) });
      const listed = await request(await app()).get("/api/v1/developers/modules/acme.charts/trusted-publishers").set(bearer(acme));
      expect(listed.body).toEqual({ items: [added.body] });

      const removed = await request(await app()).delete(`/api/v1/developers/modules/acme.charts/trusted-publishers/${added.body.id}`).set(bearer(acme));
      expect(removed.status).toBe(204);
      expect((await request(await app()).get("/api/v1/developers/modules/acme.charts/trusted-publishers").set(bearer(acme))).body).toEqual({ items: [] });
      expectProblem(await request(await app()).delete(`/api/v1/developers/modules/acme.charts/trusted-publishers/${added.body.id}`).set(bearer(acme)), 404, "not_found");

      const audit = await request(await app()).get("/api/v1/developers/modules/acme.charts/audit").set(bearer(acme));
      expect(audit.body.items.map((entry: { action: string }) => entry.action).slice(0, 2)).toEqual(["trusted-publisher.remove", "trusted-publisher.add"]);
    });

    it("refuse an untrusted issuer, a rule naming neither subject nor repository, another's module, and publisher tokens", async () => {
      expectProblem(await trust("acme.charts", { issuer: "https://ci.example", subject: "x" }), 400, "invalid_request");
      expectProblem(await trust("acme.charts", { issuer: issuer.url, claims: { ref: "refs/heads/main" } }), 400, "invalid_request");
      expectProblem(await trust("acme.charts", { issuer: issuer.url, subject: "x", claims: { branch: "main" } }), 400, "invalid_request");
      expectProblem(await trust("globex.missing", { issuer: issuer.url, subject: "x" }), 403, "namespace_mismatch");
      const globex = await createDeveloper("globex");
      expectProblem(await trust("acme.charts", { issuer: issuer.url, subject: "x" }, globex), 403, "not_owner");

      const accessToken = (await request(await app()).post("/api/v1/developers/tokens").set(bearer(acme)).send({ name: "CI" })).body.token as string;
      expectProblem(await trust("acme.charts", { issuer: issuer.url, subject: "x" }, { idToken: accessToken }), 401, "invalid_token");
      expect((await request(await app()).get("/api/v1/developers/modules/acme.charts/trusted-publishers").set(bearer(acme))).body.items).toEqual([]);
    });
  });

  describe("POST /developers/auth/oidc", () => {
    beforeEach(async () => {
      expect((await trust("acme.charts", { issuer: issuer.url, claims: { repository: REPOSITORY, ref: "refs/heads/main" } })).status).toBe(201);
    });

    it("turns a matching CI token into an mpo_ token of that module only, at most 15 minutes, that signs and publishes it with provenance", async () => {
      const before = Date.now();
      const granted = await publishToken();
      expect(granted).toEqual({ token: expect.stringMatching(/^mpo_[0-9A-Za-z]{43}$/), expiresAt: expect.any(String), moduleIds: ["acme.charts"] });
      expect(Date.parse(granted.expiresAt)).toBeLessThanOrEqual(Date.now() + 15 * 60_000);
      expect(Date.parse(granted.expiresAt)).toBeGreaterThanOrEqual(before + 15 * 60_000 - 1000);

      const signed = await sign(granted.token, { id: "acme.charts", name: "Charts", version: "1.1.0", summary: "Charts." });
      expect(signed.status).toBe(201);
      const provenance = {
        issuer: issuer.url,
        subject: `repo:${REPOSITORY}:ref:refs/heads/main`,
        repository: REPOSITORY,
        workflowRef: `${REPOSITORY}/.github/workflows/release.yml@refs/heads/main`,
        ref: "refs/heads/main",
        sha: "3f786850e387550fdab836ed7e6dc881de23001b",
        runId: "8231451",
      };
      expect(signed.body.provenance).toEqual(provenance);
      expect((await publish(granted.token, "acme.charts", "1.1.0")).status).toBe(200);

      const user = await createUser();
      const download = await request(await app()).get("/api/v1/modules/download/acme.charts").set(bearer(user));
      expect(download.body).toMatchObject({ version: "1.1.0", provenance, authorSignature: null, authorKeyId: null });
      const jwks = (await request(await app()).get("/api/v1/signing-keys")).body as JSONWebKeySet;
      const verified = await compactVerify(download.body.signature, createLocalJWKSet(jwks));
      expect(JSON.parse(new TextDecoder().decode(verified.payload))).toMatchObject({ moduleId: "acme.charts", version: "1.1.0", provenance });

      const mine = await request(await app()).get("/api/v1/developers/modules").set(bearer(acme));
      const charts = mine.body.items.find((item: { id: string }) => item.id === "acme.charts");
      expect(charts.versions.find((version: { version: string }) => version.version === "1.1.0").provenance).toEqual(provenance);
      expect(charts.versions.find((version: { version: string }) => version.version === "1.0.0").provenance).toBeNull();

      const audit = await request(await app()).get("/api/v1/developers/modules/acme.charts/audit").set(bearer(acme));
      const byAction = (action: string) => audit.body.items.find((entry: { action: string }) => entry.action === action);
      const tokenId = byAction("token.oidc-exchange").actor.id as string;
      expect(tokenId).toMatch(/^otk_/);
      expect(byAction("token.oidc-exchange").details).toMatchObject({ tokenId, provenance });
      expect(byAction("module.sign").actor).toEqual({ kind: "token", id: tokenId });
      expect(byAction("module.publish").actor).toEqual({ kind: "token", id: tokenId });
    });

    it("keeps the mpo_ token to its modules: another module, the token routes and the module list see nothing else", async () => {
      const { token } = await publishToken();
      expectProblem(await sign(token, { id: "acme.notes", name: "Notes", version: "1.1.0", summary: "Notes." }), 403, "not_owner");
      expectProblem(await request(await app()).post("/api/v1/developers/modules/yank").set(asBearer(token)).send({ moduleId: "acme.notes", version: "1.0.0" }), 403, "not_owner");
      expectProblem(await request(await app()).get("/api/v1/developers/modules/acme.notes/stats").set(asBearer(token)), 403, "not_owner");
      expectProblem(await request(await app()).get("/api/v1/developers/modules/acme.notes/audit").set(asBearer(token)), 403, "not_owner");
      expectProblem(await request(await app()).post("/api/v1/developers/tokens").set(asBearer(token)).send({ name: "escalate" }), 401, "invalid_token");
      expectProblem(await request(await app()).post("/api/v1/developers/keys").set(asBearer(token)).send({}), 401, "invalid_token");
      expectProblem(await request(await app()).put("/api/v1/developers/modules/acme.charts/policy").set(asBearer(token)).send({ requireTrustedPublishing: false, requireAuthorSignature: false }), 401, "invalid_token");
      const listed = await request(await app()).get("/api/v1/developers/modules").set(asBearer(token));
      expect(listed.body.items.map((item: { id: string }) => item.id)).toEqual(["acme.charts"]);
      expect((await request(await app()).post("/api/v1/developers/modules/yank").set(asBearer(token)).send({ moduleId: "acme.charts", version: "1.0.0" })).status).toBe(200);
    });

    it("lets CI publish the first version of a module that does not exist yet, in the owner's namespace", async () => {
      expect((await trust("acme.fresh", { issuer: issuer.url, claims: { repository: "acme/fresh" } })).status).toBe(201);
      const granted = await publishToken(githubClaims("acme/fresh"));
      expect(granted.moduleIds).toEqual(["acme.fresh"]);
      expect((await sign(granted.token, { id: "acme.fresh", name: "Fresh", version: "0.1.0", summary: "New." })).status).toBe(201);
      expect((await publish(granted.token, "acme.fresh", "0.1.0")).status).toBe(200);
      const listed = await request(await app()).get("/api/v1/developers/modules").set(bearer(acme));
      expect(listed.body.items.find((item: { id: string }) => item.id === "acme.fresh").versions[0].provenance.repository).toBe("acme/fresh");
    });

    it("keeps the issuer's keys: one JWKS fetch for many exchanges on an instance (each new instance fetches its own)", async () => {
      const instance = await app();
      const before = issuer.jwksFetches();
      for (let i = 0; i < 3; i += 1) {
        expect((await request(instance).post("/api/v1/developers/auth/oidc").send({ token: await issuer.token(githubClaims(REPOSITORY)) })).status).toBe(200);
      }
      expect(issuer.jwksFetches() - before).toBe(1);
      expect((await exchange(await issuer.token(githubClaims(REPOSITORY)))).status).toBe(200);
      expect(issuer.jwksFetches() - before).toBe(2);
    });

    it("accepts ES256 tokens", async () => {
      const response = await exchange(await issuer.token(githubClaims(REPOSITORY), { alg: "ES256" }));
      expect(response.status).toBe(200);
    });

    it.each([
      ["a wrong audience", { audience: "somebody-else" }],
      ["an expired token", { expiresIn: -60 }],
      ["a token not valid yet", { notBefore: 600 }],
      ["a key the issuer does not publish", { unknownKey: true }],
      ["an untrusted issuer", { issuer: "http://127.0.0.1:9" }],
    ])("refuses %s with 401 invalid_token", async (_what, options) => {
      expectProblem(await exchange(await issuer.token(githubClaims(REPOSITORY), options)), 401, "invalid_token");
    });

    it("refuses what is not a signed JWT with 401, and a malformed body with 400", async () => {
      // A fork's genuine token, its claims rewritten to name the trusted repository.
      const genuine = await issuer.token(githubClaims("mallory/charts"));
      const [header, payload] = genuine.split(".");
      const forged = Buffer.from(JSON.stringify({ ...decodeJwt(genuine), ...githubClaims(REPOSITORY) })).toString("base64url");
      for (const token of ["not-a-jwt", `${header}.${forged}.${genuine.split(".")[2]}`, `${header}.${payload}.`, `eyJhbGciOiJub25lIn0.${payload}.`]) {
        expectProblem(await exchange(token), 401, "invalid_token");
      }
      expectProblem(await request(await app()).post("/api/v1/developers/auth/oidc").send({ token: genuine, extra: 1 }), 400, "invalid_request");
      expectProblem(await request(await app()).post("/api/v1/developers/auth/oidc").send({}), 400, "invalid_request");
    });

    it("refuses another repository or ref with 403 no_trusted_publisher", async () => {
      expectProblem(await exchange(await issuer.token(githubClaims("acme/charts-fork"))), 403, "no_trusted_publisher");
      expectProblem(await exchange(await issuer.token(githubClaims(REPOSITORY, { ref: "refs/heads/feature", sub: "repo:acme/charts:ref:refs/heads/feature" }))), 403, "no_trusted_publisher");
      expectProblem(await exchange(await issuer.token(githubClaims(REPOSITORY.toUpperCase()))), 403, "no_trusted_publisher");
    });

    it("ends an outstanding mpo_ token when its trusted publisher is removed, and when it expires", async () => {
      const { token } = await publishToken();
      const later = () => new Date(Date.now() + 16 * 60_000);
      expectProblem(await request(await app({ clock: later })).get("/api/v1/developers/modules").set(asBearer(token)), 401, "invalid_token");
      expect((await request(await app()).get("/api/v1/developers/modules").set(asBearer(token))).status).toBe(200);

      const [rule] = (await request(await app()).get("/api/v1/developers/modules/acme.charts/trusted-publishers").set(bearer(acme))).body.items;
      await request(await app()).delete(`/api/v1/developers/modules/acme.charts/trusted-publishers/${rule.id}`).set(bearer(acme));
      expectProblem(await request(await app()).get("/api/v1/developers/modules").set(asBearer(token)), 401, "invalid_token");
      expectProblem(await exchange(await issuer.token(githubClaims(REPOSITORY))), 403, "no_trusted_publisher");
      expectProblem(await request(await app()).get("/api/v1/developers/modules").set(asBearer("mpo_" + "a".repeat(43))), 401, "invalid_token");
    });

    it("answers 503 when a trusted issuer cannot be reached, and 403 when the claims match several publishers' modules", async () => {
      const down = "http://127.0.0.1:9";
      const withDown = await testApp({ config: { trustedPublishing: { issuers: [issuer.url, down], audience: "marketplace" } } });
      const response = await request(withDown).post("/api/v1/developers/auth/oidc").send({ token: await issuer.token(githubClaims(REPOSITORY), { issuer: down }) });
      expectProblem(response, 503, "unavailable");

      const globex = await createDeveloper("globex");
      await publishModule(globex, { id: "globex.plotter", name: "Plotter", version: "1.0.0", summary: "Plots." });
      expect((await trust("globex.plotter", { issuer: issuer.url, claims: { repository: REPOSITORY } }, globex)).status).toBe(201);
      expectProblem(await exchange(await issuer.token(githubClaims(REPOSITORY))), 403, "no_trusted_publisher");
    });

    it("stores only the token's SHA-256", async () => {
      const { token } = await publishToken();
      const stored = await (await testDeps()).db.collection("publishTokens").get();
      expect(stored.size).toBe(1);
      expect(JSON.stringify(stored.docs[0].data())).not.toContain(token.slice(4));
    });
  });

  describe("publish policy", () => {
    const setPolicy = async (policy: object, who: { idToken: string } = acme) =>
      request(await app()).put("/api/v1/developers/modules/acme.charts/policy").set(bearer(who)).send(policy);

    it("with requireTrustedPublishing, refuses ID and access tokens while the OIDC path works; a leaked access token cannot lift it", async () => {
      expect((await trust("acme.charts", { issuer: issuer.url, claims: { repository: REPOSITORY } })).status).toBe(201);
      const accessToken = (await request(await app()).post("/api/v1/developers/tokens").set(bearer(acme)).send({ name: "CI" })).body.token as string;
      const set = await setPolicy({ requireTrustedPublishing: true, requireAuthorSignature: false });
      expect(set.status).toBe(200);
      expect(set.body).toEqual({ moduleId: "acme.charts", requireTrustedPublishing: true, requireAuthorSignature: false });

      const manifest = { id: "acme.charts", name: "Charts", version: "1.1.0", summary: "Charts." };
      expectProblem(await sign(acme.idToken, manifest), 403, "policy_violation");
      expectProblem(await sign(accessToken, manifest), 403, "policy_violation");
      for (const token of [acme.idToken, accessToken]) {
        expectProblem(await request(await app()).post("/api/v1/developers/modules/yank").set(asBearer(token)).send({ moduleId: "acme.charts", version: "1.0.0" }), 403, "policy_violation");
      }
      expectProblem(await setPolicy({ requireTrustedPublishing: false, requireAuthorSignature: false }, { idToken: accessToken }), 401, "invalid_token");
      // Other modules keep their own (absent) policy.
      expect((await sign(accessToken, { id: "acme.notes", name: "Notes", version: "1.1.0", summary: "Notes." })).status).toBe(201);

      const { token } = await publishToken();
      expect((await sign(token, manifest)).status).toBe(201);
      expect((await publish(token, "acme.charts", "1.1.0")).status).toBe(200);

      const mine = await request(await app()).get("/api/v1/developers/modules").set(bearer(acme));
      expect(mine.body.items.find((item: { id: string }) => item.id === "acme.charts").policy).toEqual({ requireTrustedPublishing: true, requireAuthorSignature: false });
      const audit = await request(await app()).get("/api/v1/developers/modules/acme.charts/audit").set(bearer(acme));
      expect(audit.body.items.find((entry: { action: string }) => entry.action === "module.policy").details).toEqual({
        before: { requireTrustedPublishing: false, requireAuthorSignature: false },
        after: { requireTrustedPublishing: true, requireAuthorSignature: false },
      });
    });

    it("is set by the owner only, for a module that exists, with both fields", async () => {
      const globex = await createDeveloper("globex");
      expectProblem(await setPolicy({ requireTrustedPublishing: true, requireAuthorSignature: true }, globex), 403, "not_owner");
      expectProblem(await setPolicy({ requireTrustedPublishing: true }), 400, "invalid_request");
      expectProblem(await setPolicy({ requireTrustedPublishing: "yes", requireAuthorSignature: false }), 400, "invalid_request");
      expectProblem(
        await request(await app()).put("/api/v1/developers/modules/acme.missing/policy").set(bearer(acme)).send({ requireTrustedPublishing: true, requireAuthorSignature: false }),
        404,
        "module_not_found",
      );
    });
  });
});
