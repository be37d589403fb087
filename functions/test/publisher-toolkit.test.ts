import { createHash } from "node:crypto";
import request from "supertest";
import { drainDownloadCounters } from "../src/marketplace/download-counter";
import { countDocuments } from "./support/fixtures";
import { modulePackage } from "./support/packages";
import { bearer, createDeveloper, createUser, expectProblem, publishModule, resetEmulators, testApp, testDeps, type TestDeveloper } from "./support/harness";

const DAY_MS = 24 * 60 * 60 * 1000;
const asBearer = (token: string) => ({ Authorization: `Bearer ${token}` });

async function createToken(developer: TestDeveloper, body: object = { name: "CI" }) {
  const response = await request(await testApp()).post("/api/v1/developers/tokens").set(bearer(developer)).send(body);
  expect(response.status).toBe(201);
  return response.body as { id: string; name: string; token: string; createdAt: string; expiresAt: string };
}

describe("publisher toolkit (§12)", () => {
  beforeEach(resetEmulators);

  describe("POST /developers/auth/refresh", () => {
    it("exchanges a login's refresh token for a working ID token; refuses a bad one with 401 invalid_token", async () => {
      const app = await testApp();
      const registered = await request(app)
        .post("/api/v1/developers/auth/register")
        .send({ email: "refresh@example.test", password: "long-enough-pw", displayName: "R", publisherId: "refresher" });
      expect(registered.status).toBe(201);
      const refreshed = await request(app).post("/api/v1/developers/auth/refresh").send({ refreshToken: registered.body.refreshToken });
      expect(refreshed.status).toBe(200);
      expect(refreshed.body).toEqual({ idToken: expect.any(String), refreshToken: expect.any(String), expiresIn: expect.any(Number) });
      const me = await request(app).get("/api/v1/developers/me").set(asBearer(refreshed.body.idToken));
      expect(me.body.publisherId).toBe("refresher");

      expectProblem(await request(app).post("/api/v1/developers/auth/refresh").send({ refreshToken: "not-a-refresh-token" }), 401, "invalid_token");
      expectProblem(await request(app).post("/api/v1/developers/auth/refresh").send({}), 400, "invalid_request");
    });
  });

  describe("access tokens", () => {
    it("creates a token shown once and stored only as its SHA-256, lists it without the secret, and revokes it", async () => {
      const developer = await createDeveloper("acme");
      const created = await createToken(developer, { name: "GitHub Actions" });
      expect(created).toEqual({ id: expect.stringMatching(/^tok_/), name: "GitHub Actions", token: expect.stringMatching(/^mpt_[0-9A-Za-z]{40,}$/), createdAt: expect.any(String), expiresAt: expect.any(String) });
      expect(Date.parse(created.expiresAt) - Date.parse(created.createdAt)).toBe(90 * DAY_MS);

      const { db } = await testDeps();
      const stored = await db.collection("accessTokens").get();
      expect(stored.docs.map((doc) => doc.id)).toEqual([createHash("sha256").update(created.token).digest("hex")]);
      expect(JSON.stringify(stored.docs[0].data())).not.toContain(created.token.slice(4));

      const app = await testApp();
      const listed = await request(app).get("/api/v1/developers/tokens").set(bearer(developer));
      expect(listed.body).toEqual({ items: [{ id: created.id, name: "GitHub Actions", createdAt: created.createdAt, expiresAt: created.expiresAt, lastUsedAt: null }] });

      expect((await request(app).get("/api/v1/developers/modules").set(asBearer(created.token))).status).toBe(200);
      const used = await request(app).get("/api/v1/developers/tokens").set(bearer(developer));
      expect(Date.parse(used.body.items[0].lastUsedAt)).toBeGreaterThanOrEqual(Date.parse(created.createdAt));

      const revoked = await request(app).delete(`/api/v1/developers/tokens/${created.id}`).set(bearer(developer));
      expect(revoked.status).toBe(204);
      expectProblem(await request(app).get("/api/v1/developers/modules").set(asBearer(created.token)), 401, "invalid_token");
      expectProblem(await request(app).delete(`/api/v1/developers/tokens/${created.id}`).set(bearer(developer)), 404, "token_not_found");
      expect(await countDocuments("accessTokens")).toBe(0);
    });

    it("validates names and lifetimes, and keeps each developer's tokens their own", async () => {
      const developer = await createDeveloper("acme");
      const other = await createDeveloper("globex");
      const app = await testApp();
      for (const body of [{}, { name: "" }, { name: "x", expiresInDays: 0 }, { name: "x", expiresInDays: 366 }, { name: "x", expiresInDays: 1.5 }, { name: "x", token: "mine" }]) {
        expectProblem(await request(app).post("/api/v1/developers/tokens").set(bearer(developer)).send(body), 400, "invalid_request");
      }
      const oneDay = await createToken(developer, { name: "short", expiresInDays: 1 });
      expect(Date.parse(oneDay.expiresAt) - Date.parse(oneDay.createdAt)).toBe(DAY_MS);
      expectProblem(await request(app).delete(`/api/v1/developers/tokens/${oneDay.id}`).set(bearer(other)), 404, "token_not_found");
      expect((await request(app).get("/api/v1/developers/tokens").set(bearer(other))).body.items).toEqual([]);
      expectProblem(await request(app).delete("/api/v1/developers/tokens/not-an-id").set(bearer(developer)), 400, "invalid_request");
      expectProblem(await request(app).post("/api/v1/developers/tokens").set(bearer(await createUser())).send({ name: "x" }), 403, "not_a_developer");
    });

    it("is accepted on every /developers/modules* operation but trusted publishers, policy and pricing, and on /developers/metrics (§28), and refused with 401 invalid_token on every other authenticated one", async () => {
      const developer = await createDeveloper("acme");
      await publishModule(developer, { id: "acme.charts", version: "1.0.0" });
      const { token } = await createToken(developer);
      const app = await testApp();
      const document = (await request(app).get("/api/v1/openapi.json")).body as { paths: Record<string, Record<string, { security: Record<string, string[]>[] }>> };
      const samples: Record<string, string> = { tpId: "tp_0123456789abcdef", kid: "a".repeat(43), publisherId: "acme", id: "acme.charts", moduleId: "acme.charts", deviceId: "pc-1", businessId: "acme", platform: "win32", arch: "x64", channel: "stable", currentVersion: "1.0.0", releaseId: "r1", file: "latest.yml" };
      let accepted = 0;
      let refused = 0;
      for (const [path, methods] of Object.entries(document.paths)) {
        for (const [method, operation] of Object.entries(methods)) {
          if (operation.security.length === 0) continue;
          const url = `/api/v1${path.replace(/\{(\w+)\}/g, (_, name: string) => samples[name])}`;
          const response = await request(app)[method as "get" | "post" | "put" | "delete"](url).set(asBearer(token)).send({});
          // Trusted publishers, the publish policy (§15) and prices (§20) are the owner's alone: an ID token only.
          // Analytics (§28) takes them too: a publisher's reports are read from scripts.
          if ((path.startsWith("/developers/modules") && !/\/(trusted-publishers|policy|pricing)/.test(path)) || path === "/developers/metrics") {
            expect(operation.security).toEqual([{ bearer: [] }, { accessToken: [] }, { publishToken: [] }]);
            // Accepted: the answer is about the request (200, or 400 for the empty body), never about the token.
            expect({ url, status: response.status, accepted: ![401, 403].includes(response.status) && response.status < 500 }).toEqual({ url, status: response.status, accepted: true });
            accepted += 1;
          } else {
            expect(operation.security).not.toContainEqual({ accessToken: [] });
            expect({ url, method, status: response.status, code: response.body.code }).toEqual({ url, method, status: 401, code: "invalid_token" });
            expectProblem(response, 401, "invalid_token");
            refused += 1;
          }
        }
      }
      // The module operations of §12 and §14, the owner's reply to a review and its removal (§18), and analytics (§28).
      expect(accepted).toBe(11);
      expect(refused).toBeGreaterThanOrEqual(10);
    });

    it("signs and publishes with an access token; refuses it once expired, or malformed", async () => {
      const developer = await createDeveloper("acme");
      const { token } = await createToken(developer, { name: "CI", expiresInDays: 7 });
      const app = await testApp();
      const signed = await request(app).post("/api/v1/developers/modules/sign").set(asBearer(token)).set("Content-Type", "application/octet-stream").send(await modulePackage({ id: "acme.ci", version: "1.0.0" }));
      expect(signed.status).toBe(201);
      expect((await request(app).post("/api/v1/developers/modules/publish").set(asBearer(token)).send({ moduleId: "acme.ci", version: "1.0.0" })).status).toBe(200);
      expect((await request(app).get("/api/v1/modules")).body.items.map((item: { id: string }) => item.id)).toEqual(["acme.ci"]);

      const later = await testApp({ clock: () => new Date(Date.now() + 7 * DAY_MS + 1000) });
      expectProblem(await request(later).get("/api/v1/developers/modules").set(asBearer(token)), 401, "invalid_token");
      expectProblem(await request(app).get("/api/v1/developers/modules").set(asBearer("mpt_short")), 401, "invalid_token");
      expectProblem(await request(app).get("/api/v1/developers/modules").set(asBearer(`mpt_${"A".repeat(43)}`)), 401, "invalid_token");
    });

    it("stops working when the developer's user is disabled", async () => {
      const developer = await createDeveloper("acme");
      const { token } = await createToken(developer);
      const { auth } = await testDeps();
      await auth.updateUser(developer.uid, { disabled: true });
      expectProblem(await request(await testApp()).get("/api/v1/developers/modules").set(asBearer(token)), 401, "user_disabled");
    });
  });

  describe("GET /developers/modules/:id/stats", () => {
    it("counts downloads per UTC day and version, for the owner only", async () => {
      const developer = await createDeveloper("acme");
      await publishModule(developer, { id: "acme.charts", version: "1.0.0" });
      await publishModule(developer, { id: "acme.charts", version: "1.1.0" });
      const user = await createUser();
      const dayOne = new Date("2026-03-01T12:00:00Z");
      const dayTwo = new Date("2026-03-03T08:00:00Z");
      const download = async (at: Date, version?: string) =>
        expect((await request(await testApp({ clock: () => at })).get(`/api/v1/modules/download/acme.charts${version ? `?version=${version}` : ""}`).set(bearer(user))).status).toBe(200);
      await download(dayOne);
      await download(dayOne, "1.0.0");
      await download(dayOne, "1.0.0");
      await download(dayTwo);
      await drainDownloadCounters();

      const app = await testApp({ clock: () => dayTwo });
      const stats = await request(app).get("/api/v1/developers/modules/acme.charts/stats?from=2026-03-01&to=2026-03-03").set(bearer(developer));
      expect(stats.status).toBe(200);
      expect(stats.body).toEqual({
        moduleId: "acme.charts",
        from: "2026-03-01",
        to: "2026-03-03",
        total: 4,
        days: [
          { date: "2026-03-01", downloads: 3, versions: { "1.0.0": 2, "1.1.0": 1 } },
          { date: "2026-03-02", downloads: 0, versions: {} },
          { date: "2026-03-03", downloads: 1, versions: { "1.1.0": 1 } },
        ],
      });
      const byDefault = await request(app).get("/api/v1/developers/modules/acme.charts/stats").set(bearer(developer));
      expect(byDefault.body).toEqual(expect.objectContaining({ from: "2026-02-02", to: "2026-03-03", total: 4 }));
      expect(byDefault.body.days).toHaveLength(30);

      const { token } = await createToken(developer);
      expect((await request(app).get("/api/v1/developers/modules/acme.charts/stats").set(asBearer(token))).body.total).toBe(4);

      const other = await createDeveloper("globex");
      expectProblem(await request(app).get("/api/v1/developers/modules/acme.charts/stats").set(bearer(other)), 403, "not_owner");
      expectProblem(await request(app).get("/api/v1/developers/modules/acme.nothing/stats").set(bearer(developer)), 404, "module_not_found");
      for (const query of ["from=2026-03-04&to=2026-03-03", "from=2025-01-01&to=2026-03-03", "from=2026-02-30", "to=yesterday", "days=3"]) {
        expectProblem(await request(app).get(`/api/v1/developers/modules/acme.charts/stats?${query}`).set(bearer(developer)), 400, "invalid_request");
      }
      expect((await request(app).get("/api/v1/developers/modules/acme.charts/stats?from=2025-03-03&to=2026-03-03").set(bearer(developer))).body.days).toHaveLength(366);
    });
  });
});
