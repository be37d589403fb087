import request from "supertest";
import type { Express } from "express";
import { backendCallCounts } from "../src/core/deadline";
import { drainDownloadCounters } from "../src/marketplace/download-counter";
import { countDocuments } from "./support/fixtures";
import { modulePackage } from "./support/packages";
import { bearer, createDeveloper, createUser, resetEmulators, testApp, testDeps, type TestDeveloper } from "./support/harness";

/** Contention is not an error: many calls on one document end in their contract answers, fast. */
describe("contention", () => {
  let app: Express;
  let developer: TestDeveloper;

  beforeAll(async () => {
    await resetEmulators();
    app = await testApp({ config: { rateLimit: { perIpPerMinute: 1_000_000, perUserPerMinute: 1_000_000 } } });
    developer = await createDeveloper("acme");
    const signed = await request(app).post("/api/v1/developers/modules/sign").set(bearer(developer)).set("Content-Type", "application/octet-stream")
      .send(await modulePackage({ id: "acme.hot" }));
    expect(signed.status).toBe(201);
  });

  it("150 concurrent publishes of one version: exactly one 200, the rest 409 version_already_published", async () => {
    const started = Date.now();
    const responses = await Promise.all(
      Array.from({ length: 150 }, () => request(app).post("/api/v1/developers/modules/publish").set(bearer(developer)).send({ moduleId: "acme.hot", version: "1.0.0" })),
    );
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(responses.filter((response) => response.status === 409).map((response) => response.body.code)).toEqual(Array(149).fill("version_already_published"));
    // Seconds, not the ~20 s of lock timeouts a transaction per caller took.
    expect(Date.now() - started).toBeLessThan(15_000);
    const listed = await request(app).get("/api/v1/modules");
    expect(listed.body.items.map((item: { id: string; latestVersion: string }) => [item.id, item.latestVersion])).toEqual([["acme.hot", "1.0.0"]]);
  }, 60_000);

  it("100 concurrent confirms of one module by one user on 3 devices all answer 200 and agree on activatedAt", async () => {
    const user = await createUser();
    const responses = await Promise.all(
      Array.from({ length: 100 }, (_, index) =>
        request(app).post("/api/v1/modules/confirm").set(bearer(user)).send({ moduleId: "acme.hot", deviceId: `device-${index % 3}` }),
      ),
    );
    expect(responses.map((response) => response.status)).toEqual(Array(100).fill(200));
    const activatedAt = new Set(responses.map((response) => response.body.activatedAt));
    expect(activatedAt.size).toBe(1);
    const profile = await request(app).get("/api/v1/users/me").set(bearer(user));
    expect(profile.body.activations).toEqual([
      { moduleId: "acme.hot", version: "1.0.0", activatedAt: [...activatedAt][0], devices: expect.any(Array) },
    ]);
    expect(profile.body.activations[0].devices.map((device: { deviceId: string }) => device.deviceId).sort()).toEqual(["device-0", "device-1", "device-2"]);
  }, 60_000);

  it("counts 120 concurrent downloads of one module exactly, in a few group-committed writes to counter shards, never writing the module document", async () => {
    const { db } = await testDeps();
    const user = await createUser();
    const moduleBefore = (await db.collection("modules").doc("acme.hot").get()).updateTime;
    await request(app).get("/api/v1/modules/download/acme.hot").set(bearer(user));
    const callsBefore = backendCallCounts().Firestore ?? 0;
    const responses = await Promise.all(Array.from({ length: 119 }, () => request(app).get("/api/v1/modules/download/acme.hot").set(bearer(user))));
    expect(responses.map((response) => response.status)).toEqual(Array(119).fill(200));
    // The caller's data is read at every request (the user document, the business query and the
    // purchase query: no business, so no subscription or business purchase read); the module and
    // version come from memory; the counts go out in a few batches, not 119 writes.
    expect((backendCallCounts().Firestore ?? 0) - callsBefore - 119 * 3).toBeLessThan(30);
    expect((await db.collection("modules").doc("acme.hot").get()).updateTime?.isEqual(moduleBefore!)).toBe(true);
    await drainDownloadCounters();
    expect(await countDocuments("modules/acme.hot/downloadShards")).toBeGreaterThanOrEqual(1);
    const mine = await request(app).get("/api/v1/developers/modules").set(bearer(developer));
    expect(mine.body.items).toEqual([expect.objectContaining({ id: "acme.hot", downloads: 120 })]);
  }, 60_000);
});
