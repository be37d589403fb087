import { compactVerify, createLocalJWKSet } from "jose";
import request from "supertest";
import { drainDownloadCounters } from "../src/marketplace/download-counter";
import { activationSchema } from "../src/activations/schemas";
import { downloadSchema, moduleListSchema } from "../src/marketplace/schemas";
import { countDocuments, daysFromNow, putBusiness, putSubscription, putUser, sha256Hex } from "./support/fixtures";
import { modulePackage } from "./support/packages";
import { bearer, createDeveloper, createUser, expectProblem, publishModule, resetEmulators, testApp, type TestDeveloper, type TestUser } from "./support/harness";


describe("marketplace", () => {
  let acme: TestDeveloper;
  let chartsV2: Buffer;

  beforeAll(async () => {
    await resetEmulators();
    acme = await createDeveloper("acme");
    await publishModule(acme, { id: "acme.charts", name: "Charts", summary: "Bar charts and pie-charts.", version: "1.0.0", category: "data", entitlement: "pro" });
    chartsV2 = await publishModule(acme, { id: "acme.charts", name: "Charts", summary: "Bar charts and pie-charts.", version: "2.0.0", category: "data", entitlement: "pro" });
    await publishModule(acme, { id: "acme.notes", name: "Sticky Notes", summary: "Quick notes on the desktop.", version: "0.3.0", category: "productivity" });
    await publishModule(acme, { id: "acme.maps", name: "World Maps", summary: "Offline maps.", version: "1.0.0", category: "data" });
    // Signed but never published: not in the marketplace.
    await request(await testApp()).post("/api/v1/developers/modules/sign").set(bearer(acme)).set("Content-Type", "application/octet-stream")
      .send(await modulePackage({ id: "acme.draft", version: "0.0.1" }));
  });

  describe("GET /modules", () => {
    it("lists published modules, newest updatedAt first, without access flags when anonymous", async () => {
      const response = await request(await testApp()).get("/api/v1/modules");
      expect(response.status).toBe(200);
      expect(moduleListSchema.parse(response.body)).toBeTruthy();
      expect(response.body.items.map((m: { id: string }) => m.id)).toEqual(["acme.maps", "acme.notes", "acme.charts"]);
      expect(response.body.nextCursor).toBeNull();
      expect(response.body.items[2]).toEqual({
        id: "acme.charts",
        name: "Charts",
        summary: "Bar charts and pie-charts.",
        tags: [],
        rating: null,
        category: "data",
        publisherId: "acme",
        publisher: { id: "acme", displayName: "Dev acme", verifiedDomain: null },
        latestVersion: "2.0.0",
        entitlement: "pro",
        price: null,
        downloads: 0,
        updatedAt: expect.any(String),
        iconUrl: null,
        visibility: "public",
        businessId: null,
      });
    });

    it("pages with limit and an opaque cursor, and rejects a bad cursor or limit with 400", async () => {
      const app = await testApp();
      const first = await request(app).get("/api/v1/modules?limit=2");
      expect(first.body.items.map((m: { id: string }) => m.id)).toEqual(["acme.maps", "acme.notes"]);
      expect(first.body.nextCursor).toEqual(expect.any(String));
      const second = await request(app).get(`/api/v1/modules?limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`);
      expect(second.body.items.map((m: { id: string }) => m.id)).toEqual(["acme.charts"]);
      expect(second.body.nextCursor).toBeNull();
      expectProblem(await request(app).get("/api/v1/modules?cursor=garbage"), 400, "invalid_request");
      expectProblem(await request(app).get(`/api/v1/modules?cursor=${Buffer.from('{"s":1}').toString("base64url")}`), 400, "invalid_request");
      expectProblem(await request(app).get("/api/v1/modules?limit=0"), 400, "invalid_request");
      expectProblem(await request(app).get("/api/v1/modules?limit=101"), 400, "invalid_request");
      expectProblem(await request(app).get("/api/v1/modules?limit=abc"), 400, "invalid_request");
    });

    it("filters by category and by q (every word, whole, a prefix or within an edit, of any field, any case)", async () => {
      const app = await testApp();
      const ids = async (query: string) => (await request(app).get(`/api/v1/modules?${query}`)).body.items.map((m: { id: string }) => m.id);
      expect(await ids("category=data")).toEqual(["acme.maps", "acme.charts"]);
      expect(await ids("q=pie")).toEqual(["acme.charts"]);
      expect(await ids("q=CHAR")).toEqual(["acme.charts"]);
      expect(await ids("q=acme&sort=updated")).toEqual(["acme.maps", "acme.notes", "acme.charts"]);
      expect(await ids("q=desk")).toEqual(["acme.notes"]);
      expect(await ids("q=harts")).toEqual(["acme.charts"]);
      expect(await ids("q=bar%20pie")).toEqual(["acme.charts"]);
      expect(await ids("q=bar%20offline")).toEqual([]);
      expect(await ids("q=offline&category=productivity")).toEqual([]);
      expect(await ids("q=offline&category=data")).toEqual(["acme.maps"]);
      expectProblem(await request(app).get(`/api/v1/modules?q=${"a".repeat(201)}`), 400, "invalid_request");
      expectProblem(await request(app).get("/api/v1/modules?sort=best"), 400, "invalid_request");
      expectProblem(await request(app).get("/api/v1/modules?pricing=cheap"), 400, "invalid_request");
    });

    it("says, with a token, whether the caller may use and has activated each module", async () => {
      const user = await createUser();
      const app = await testApp();
      await request(app).post("/api/v1/modules/confirm").set(bearer(user)).send({ moduleId: "acme.notes" });
      const response = await request(app).get("/api/v1/modules").set(bearer(user));
      const access = Object.fromEntries(response.body.items.map((m: { id: string; access: object }) => [m.id, m.access]));
      expect(access).toEqual({
        "acme.maps": { usable: true, activated: false },
        "acme.notes": { usable: true, activated: true },
        "acme.charts": { usable: false, activated: false },
      });
      expectProblem(await request(app).get("/api/v1/modules").set("Authorization", "Bearer bad"), 401, "invalid_token");
    });
  });

  describe("POST /modules/confirm", () => {
    let user: TestUser;
    beforeEach(async () => {
      user = await createUser();
    });
    const confirm = async (who: TestUser, body: object) => request(await testApp()).post("/api/v1/modules/confirm").set(bearer(who)).send(body);

    it("records an activation of the latest version, idempotently: a repeat keeps activatedAt", async () => {
      const first = await confirm(user, { moduleId: "acme.maps" });
      expect(first.status).toBe(200);
      expect(activationSchema.parse(first.body)).toEqual({ moduleId: "acme.maps", version: "1.0.0", activatedAt: expect.any(String), updatedAt: first.body.activatedAt });
      await new Promise((resolve) => setTimeout(resolve, 20));
      const again = await confirm(user, { moduleId: "acme.maps" });
      expect(again.body).toEqual({ moduleId: "acme.maps", version: "1.0.0", activatedAt: first.body.activatedAt, updatedAt: expect.any(String) });
      expect(Date.parse(again.body.updatedAt)).toBeGreaterThan(Date.parse(first.body.updatedAt));
      const profile = await request(await testApp()).get("/api/v1/users/me").set(bearer(user));
      expect(profile.body.activations).toEqual([{ moduleId: "acme.maps", version: "1.0.0", activatedAt: first.body.activatedAt, devices: [] }]);
    });

    it("answers 404 module_not_found and version_not_found, and 403 not_entitled for a paid module", async () => {
      expectProblem(await confirm(user, { moduleId: "acme.nothing" }), 404, "module_not_found");
      expectProblem(await confirm(user, { moduleId: "acme.draft" }), 404, "module_not_found");
      expectProblem(await confirm(user, { moduleId: "acme.maps", version: "9.9.9" }), 404, "version_not_found");
      expectProblem(await confirm(user, { moduleId: "acme.charts" }), 403, "not_entitled");
      expectProblem(await confirm(user, { moduleId: "acme.maps", extra: 1 }), 400, "invalid_request");
      expect(await countDocuments(`users/${user.uid}/activations`)).toBe(0);
    });
  });

  describe("GET /modules/download/:id", () => {
    const download = async (who: TestUser, path: string) => request(await testApp()).get(`/api/v1/modules/download/${path}`).set(bearer(who));

    it("refuses a paid module without its entitlement (403), and serves it with a direct grant", async () => {
      const user = await createUser();
      expectProblem(await download(user, "acme.charts"), 403, "not_entitled");
      await putUser(user.uid, { entitlements: ["pro"] });
      expect((await download(user, "acme.charts")).status).toBe(200);
    });

    it("serves a paid module through a live business subscription, and stops when it lapses", async () => {
      const user = await createUser();
      await putBusiness("biz", { name: "Biz", memberIds: [user.uid] });
      await putSubscription("biz", { status: "trialing", currentPeriodEnd: daysFromNow(3), entitlements: ["pro"] });
      expect((await download(user, "acme.charts")).status).toBe(200);
      await putSubscription("biz", { status: "active", currentPeriodEnd: daysFromNow(-4), entitlements: ["pro"] });
      expectProblem(await download(user, "acme.charts"), 403, "not_entitled");
    });

    it("hands out a signed URL (≤ 15 min) whose bytes hash to sha256, with a verifiable signature, and counts it", async () => {
      const user = await createUser();
      await putUser(user.uid, { entitlements: ["pro"] });
      const response = await download(user, "acme.charts");
      expect(response.status).toBe(200);
      expect(downloadSchema.parse(response.body)).toMatchObject({ moduleId: "acme.charts", version: "2.0.0", sha256: sha256Hex(chartsV2), size: chartsV2.length });
      const ttl = Date.parse(response.body.expiresAt) - Date.now();
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(15 * 60 * 1000);
      const bytes = await (await fetch(response.body.url)).arrayBuffer();
      expect(sha256Hex(bytes)).toBe(response.body.sha256);

      const keys = await request(await testApp()).get("/api/v1/signing-keys");
      const { payload, protectedHeader } = await compactVerify(response.body.signature, createLocalJWKSet(keys.body));
      expect(protectedHeader.kid).toBe(response.body.keyId);
      expect(JSON.parse(Buffer.from(payload).toString())).toMatchObject({ moduleId: "acme.charts", version: "2.0.0", sha256: response.body.sha256, publisherId: "acme" });

      await drainDownloadCounters();
      const mine = await request(await testApp()).get("/api/v1/developers/modules").set(bearer(acme));
      expect(mine.body.items.find((m: { id: string }) => m.id === "acme.charts").downloads).toBeGreaterThanOrEqual(1);
    });

    it("serves an older published version on request, and 404s for unknown modules and versions", async () => {
      const user = await createUser();
      await putUser(user.uid, { entitlements: ["pro"] });
      expect((await download(user, "acme.charts?version=1.0.0")).body.version).toBe("1.0.0");
      expectProblem(await download(user, "acme.charts?version=3.0.0"), 404, "version_not_found");
      expectProblem(await download(user, "acme.nothing"), 404, "module_not_found");
      expectProblem(await download(user, "NOT_AN_ID"), 400, "invalid_request");
      expectProblem(await request(await testApp()).get("/api/v1/modules/download/acme.maps"), 401, "unauthenticated");
    });
  });
});
