import { Readable } from "node:stream";
import type { Express } from "express";
import request from "supertest";
import { grantEntitlement, revokeEntitlement } from "../src/users/entitlements";
import { backendCallCounts } from "../src/core/deadline";
import { publishRelease, setRollout } from "../src/releases/service";
import { unverifyPublisher, verifyPublisher } from "../src/publishers/service";
import { daysFromNow, putBusiness, putSubscription, putUser } from "./support/fixtures";
import { modulePackage } from "./support/packages";
import { signed, subscriptionEvent } from "./support/stripe-events";
import {
  bearer,
  createDeveloper,
  createUser,
  expectProblem,
  otherInstanceApp,
  publishModule,
  resetEmulators,
  testApp,
  testDeps,
  type TestDeveloper,
  type TestUser,
  eventually,
} from "./support/harness";

/**
 * Contract §13 on two instances of the API (two Admin SDK apps, each with its own Firestore client
 * and memory), both keeping catalog data in memory far longer than the 2 s the contract allows:
 * what they show must follow the writes anyway.
 */
const LONG_MEMORY = { memoryCacheMs: 600_000, rateLimit: { perIpPerMinute: 1_000_000, perUserPerMinute: 1_000_000 } };
const CATALOG_BOUND_MS = 2_000;

/** Asks until `check` passes, for at most the contract's 2 s; fails with the last answer otherwise. */
const within2s = (check: () => Promise<void>) => eventually(check, CATALOG_BOUND_MS);

describe("freshness across instances (§13)", () => {
  let one: Express;
  let two: Express;
  let developer: TestDeveloper;
  let reader: TestUser;

  const profileKeys = async (app: Express, user: TestUser) =>
    ((await request(app).get("/api/v1/users/me").set(bearer(user))).body.entitlements as { key: string }[]).map((grant) => grant.key);
  const downloadStatus = async (app: Express, user: TestUser, path = "acme.charts") =>
    (await request(app).get(`/api/v1/modules/download/${path}`).set(bearer(user))).status;
  const listed = async (app: Express) =>
    ((await request(app).get("/api/v1/modules")).body.items as { id: string; latestVersion: string }[]).map((item) => `${item.id}@${item.latestVersion}`);

  beforeAll(async () => {
    await resetEmulators();
    one = await testApp({ config: LONG_MEMORY });
    two = await otherInstanceApp({ config: LONG_MEMORY });
    developer = await createDeveloper("acme");
    await publishModule(developer, { id: "acme.charts", version: "1.0.0", entitlement: "pro" });
  });

  beforeEach(async () => {
    reader = await createUser();
    // Both instances have answered this caller before the change: anything they kept is warm.
    for (const app of [one, two]) {
      expect(await profileKeys(app, reader)).toEqual([]);
      expect(await downloadStatus(app, reader)).toBe(403);
    }
  });

  it("a caller's data: an operator's grant and revoke show at the next request on both instances", async () => {
    const deps = await testDeps();
    await grantEntitlement(deps, { user: reader.email, key: "pro" });
    for (const app of [one, two]) {
      expect(await profileKeys(app, reader)).toEqual(["pro"]);
      expect(await downloadStatus(app, reader)).toBe(200);
      expect((await request(app).get("/api/v1/modules").set(bearer(reader))).body.items[0].access.usable).toBe(true);
    }
    await revokeEntitlement(deps, { user: reader.email, key: "pro" });
    for (const app of [one, two]) {
      expect(await profileKeys(app, reader)).toEqual([]);
      expectProblem(await request(app).get("/api/v1/modules/download/acme.charts").set(bearer(reader)), 403, "not_entitled");
      expect((await request(app).post("/api/v1/modules/confirm").set(bearer(reader)).send({ moduleId: "acme.charts" })).status).toBe(403);
    }
  });

  it("a caller's data costs two Firestore round trips: user, memberships, own purchases and activations together, then the businesses, their subscriptions and purchases", async () => {
    const businessId = `rt-${reader.uid}`.toLowerCase();
    await putBusiness(businessId, { name: "Round Trips", memberIds: [reader.uid] });
    await putSubscription(businessId, { status: "active", currentPeriodEnd: daysFromNow(10), entitlements: ["pro"] });
    const firestore = () => backendCallCounts();
    for (const path of ["/api/v1/users/me", "/api/v1/modules"]) {
      await request(one).get(path).set(bearer(reader));
      const before = firestore();
      expect((await request(one).get(path).set(bearer(reader))).status).toBe(200);
      const after = firestore();
      expect({ path, roundTrips: after["Firestore round trips"] - before["Firestore round trips"], calls: after.Firestore - before.Firestore }).toEqual({ path, roundTrips: 2, calls: 7 });
    }
  });

  it("a caller's data: a document edited by hand (the console) shows at the next request", async () => {
    await putUser(reader.uid, { entitlements: ["pro"] });
    for (const app of [one, two]) expect(await downloadStatus(app, reader)).toBe(200);
    await putUser(reader.uid, { entitlements: [] });
    for (const app of [one, two]) expect(await downloadStatus(app, reader)).toBe(403);
  });

  it("a caller's data: a Stripe event delivered to one instance shows on the other at once, and a lapse by support stops downloads", async () => {
    const businessId = `biz-${reader.uid}`.toLowerCase();
    await putBusiness(businessId, { name: "Paying Co", memberIds: [reader.uid] });
    const { payload, header } = signed(subscriptionEvent({ businessId, status: "active", price: { metadata: { entitlements: "pro" } } }));
    const delivered = await request(one).post("/api/v1/billing/stripe/webhook").set("Content-Type", "application/json").set("Stripe-Signature", header).send(payload);
    expect(delivered.body).toEqual(expect.objectContaining({ outcome: "applied" }));
    expect(await profileKeys(two, reader)).toEqual(["pro"]);
    expect(await downloadStatus(two, reader)).toBe(200);

    await putSubscription(businessId, { status: "canceled", currentPeriodEnd: daysFromNow(10), entitlements: ["pro"] });
    for (const app of [one, two]) {
      expect(await downloadStatus(app, reader)).toBe(403);
      expect((await request(app).get(`/api/v1/subscriptions/${businessId}`).set(bearer(reader))).body.status).toBe("canceled");
    }
  });

  it("the catalog: a publish, a yank and an unyank on one instance show there at once and on the other within 2 s", async () => {
    await publishModule(developer, { id: "acme.free", version: "1.0.0" });
    for (const app of [one, two]) expect(await listed(app)).toContain("acme.free@1.0.0");
    const user = reader;
    expect(await downloadStatus(two, user, "acme.free")).toBe(200);

    // Publish 1.1.0 through instance one.
    const bytes = await modulePackage({ id: "acme.free", version: "1.1.0" });
    expect((await request(one).post("/api/v1/developers/modules/sign").set(bearer(developer)).set("Content-Type", "application/octet-stream").send(bytes)).status).toBe(201);
    expect((await request(one).post("/api/v1/developers/modules/publish").set(bearer(developer)).send({ moduleId: "acme.free", version: "1.1.0" })).status).toBe(200);
    const latest = async (app: Express) => (await request(app).get("/api/v1/modules/download/acme.free").set(bearer(user))).body.version;
    expect(await listed(one)).toContain("acme.free@1.1.0");
    expect(await latest(one)).toBe("1.1.0");
    await within2s(async () => {
      expect(await listed(two)).toContain("acme.free@1.1.0");
      expect(await latest(two)).toBe("1.1.0");
    });

    // Yank 1.1.0 through instance one: neither offers it as the latest any more.
    expect((await request(one).post("/api/v1/developers/modules/yank").set(bearer(developer)).send({ moduleId: "acme.free", version: "1.1.0", reason: "broken" })).status).toBe(200);
    const updates = async (app: Express) =>
      (await request(app).post("/api/v1/modules/updates").set(bearer(user)).send({ appVersion: "1.0.0", installed: [{ moduleId: "acme.free", version: "1.1.0" }] })).body.items;
    expect(await latest(one)).toBe("1.0.0");
    expect(await listed(one)).toContain("acme.free@1.0.0");
    await within2s(async () => {
      expect(await latest(two)).toBe("1.0.0");
      expect(await listed(two)).toContain("acme.free@1.0.0");
    });
    for (const app of [one, two]) expect(await updates(app)).toEqual([expect.objectContaining({ moduleId: "acme.free", yanked: true, version: "1.0.0" })]);

    // Unyank through instance two this time.
    expect((await request(two).post("/api/v1/developers/modules/unyank").set(bearer(developer)).send({ moduleId: "acme.free", version: "1.1.0" })).status).toBe(200);
    expect(await latest(two)).toBe("1.1.0");
    await within2s(async () => {
      expect(await latest(one)).toBe("1.1.0");
      expect(await listed(one)).toContain("acme.free@1.1.0");
    });
  });

  it("a module's page (§16): a new version's README and a yank show on the other instance within 2 s", async () => {
    const pageOf = async (app: Express) => (await request(app).get("/api/v1/modules/acme.paged")).body as { latestVersion: string; readmeHtml: string | null };
    const signAndPublish = async (app: Express, version: string, readme: string) => {
      const bytes = await modulePackage({ id: "acme.paged", version }, [{ name: "README.md", content: readme }]);
      expect((await request(app).post("/api/v1/developers/modules/sign").set(bearer(developer)).set("Content-Type", "application/octet-stream").send(bytes)).status).toBe(201);
      expect((await request(app).post("/api/v1/developers/modules/publish").set(bearer(developer)).send({ moduleId: "acme.paged", version })).status).toBe(200);
    };
    await signAndPublish(one, "1.0.0", "# One");
    for (const app of [one, two]) expect(await pageOf(app)).toMatchObject({ latestVersion: "1.0.0", readmeHtml: "<h1>One</h1>\n" });

    await signAndPublish(one, "2.0.0", "# Two");
    expect(await pageOf(one)).toMatchObject({ latestVersion: "2.0.0", readmeHtml: "<h1>Two</h1>\n" });
    await within2s(async () => expect(await pageOf(two)).toMatchObject({ latestVersion: "2.0.0", readmeHtml: "<h1>Two</h1>\n" }));

    expect((await request(two).post("/api/v1/developers/modules/yank").set(bearer(developer)).send({ moduleId: "acme.paged", version: "2.0.0" })).status).toBe(200);
    expect(await pageOf(two)).toMatchObject({ latestVersion: "1.0.0", readmeHtml: "<h1>One</h1>\n" });
    await within2s(async () => expect(await pageOf(one)).toMatchObject({ latestVersion: "1.0.0", readmeHtml: "<h1>One</h1>\n" }));
  });

  it("a publisher's verified badge (§24): an operator's verify and unverify show in the listing and on the page of both instances within 2 s", async () => {
    const publisherOf = async (app: Express) => {
      const listing = (await request(app).get("/api/v1/modules")).body.items as { id: string; publisher: unknown }[];
      return { listed: listing.find((item) => item.id === "acme.charts")?.publisher, page: (await request(app).get("/api/v1/modules/acme.charts")).body.publisher };
    };
    const unverified = { id: "acme", displayName: "Dev acme", verifiedDomain: null };
    for (const app of [one, two]) expect(await publisherOf(app)).toEqual({ listed: unverified, page: unverified });

    const deps = await testDeps();
    expect(await verifyPublisher(deps, { publisherId: "acme", domain: " Acme.Example " })).toEqual({ publisherId: "acme", verifiedDomain: "acme.example", modules: expect.any(Number) });
    const verified = { ...unverified, verifiedDomain: "acme.example" };
    for (const app of [one, two]) await within2s(async () => expect(await publisherOf(app)).toEqual({ listed: verified, page: verified }));

    await unverifyPublisher(deps, { publisherId: "acme" });
    for (const app of [one, two]) await within2s(async () => expect(await publisherOf(app)).toEqual({ listed: unverified, page: unverified }));

    await expect(verifyPublisher(deps, { publisherId: "nobody", domain: "nobody.example" })).rejects.toMatchObject({ code: "not_found" });
    for (const domain of ["localhost", "-bad.example", "a..example", "exa mple.com", "x".repeat(64) + ".example"]) {
      await expect(verifyPublisher(deps, { publisherId: "acme", domain })).rejects.toMatchObject({ code: "invalid_request" });
    }
  });

  it("the catalog: a module whose every version is yanked leaves the listing, and an explicit ?version= download still works", async () => {
    await publishModule(developer, { id: "acme.gone", version: "1.0.0" });
    expect((await request(one).post("/api/v1/developers/modules/yank").set(bearer(developer)).send({ moduleId: "acme.gone", version: "1.0.0" })).status).toBe(200);
    for (const app of [one, two]) {
      await within2s(async () => expect(await listed(app)).not.toContain("acme.gone@1.0.0"));
      expectProblem(await request(app).get("/api/v1/modules/download/acme.gone").set(bearer(reader)), 404, "module_not_found");
      const explicit = await request(app).get("/api/v1/modules/download/acme.gone?version=1.0.0").set(bearer(reader));
      expect({ status: explicit.status, version: explicit.body.version }).toEqual({ status: 200, version: "1.0.0" });
      expectProblem(await request(app).get("/api/v1/modules/download/acme.gone?version=2.0.0").set(bearer(reader)), 404, "version_not_found");
    }
    // A module that was only ever signed is still unknown, whatever version is asked.
    const bytes = await modulePackage({ id: "acme.draft", version: "1.0.0" });
    expect((await request(one).post("/api/v1/developers/modules/sign").set(bearer(developer)).set("Content-Type", "application/octet-stream").send(bytes)).status).toBe(201);
    expectProblem(await request(two).get("/api/v1/modules/download/acme.draft?version=1.0.0").set(bearer(reader)), 404, "module_not_found");
  });

  it("releases: an operator's publish and halt show on both instances within 2 s", async () => {
    const deps = await testDeps();
    const offered = async (app: Express) => {
      const response = await request(app).get("/api/v1/updates/linux/x64/stable/0.9.0");
      return response.status === 200 ? response.body.version : response.status;
    };
    for (const app of [one, two]) expect(await offered(app)).toBe(404);
    for (const version of ["1.0.0", "1.1.0"]) {
      await publishRelease(deps, { version, platform: "linux", arch: "x64", fileName: `Setup-${version}` }, { content: Readable.from([Buffer.from(version)]), size: version.length });
    }
    for (const app of [one, two]) await within2s(async () => expect(await offered(app)).toBe("1.1.0"));
    await setRollout(deps, { releaseId: "linux-x64-stable-1.1.0", percentage: 0 });
    for (const app of [one, two]) {
      await within2s(async () => {
        expect(await offered(app)).toBe("1.0.0");
        expect((await request(app).get("/api/v1/releases/download/linux")).headers.location).toContain("linux-x64-stable-1.0.0/");
      });
    }
  });
});
