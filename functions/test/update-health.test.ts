import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import request from "supertest";
import { createApp } from "../src/app";
import { localServer } from "../src/local";
import { releaseHealth } from "../src/releases/service";
import { putRelease } from "./support/fixtures";
import { expectProblem, resetEmulators, testApp, testDeps } from "./support/harness";

/** Contract §19: health reports from the desktop app, counted once each, exact under concurrency. */
describe("update health reports (§19)", () => {
  beforeAll(async () => {
    await resetEmulators();
    await putRelease("win-1.2.0", { version: "1.2.0", platform: "win32", arch: "x64", channel: "stable" });
  });

  const report = (stagingId: string, event: string, extra: object = {}) => ({ releaseId: "win-1.2.0", stagingId, fromVersion: "1.1.0", event, ...extra });

  it("counts 1,000 concurrent reports exactly, each (app, event) once, and says how the update goes", async () => {
    const { db } = await testDeps();
    const server: Server = localServer(createApp(await testDeps()));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
    const send = (body: object) => fetch(`${base}/updates/reports`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) }).then((answer) => answer.status);
    try {
      // 400 apps install it, 40 of them fail; 360 launch, 9 of them crash; 200 of the reports are sent twice.
      const bodies = [
        ...Array.from({ length: 400 }, (_, i) => report(`app-${i}`, i < 40 ? "failed" : "installed", i < 40 ? { error: "Access denied" } : {})),
        ...Array.from({ length: 360 }, (_, i) => report(`app-${i + 40}`, i < 9 ? "crashed" : "launched")),
        ...Array.from({ length: 240 }, (_, i) => report(`app-${i}`, i < 40 ? "failed" : "installed")),
      ];
      expect(bodies).toHaveLength(1_000);
      const statuses = await Promise.all(bodies.map(send));
      expect(statuses.filter((status) => status !== 202)).toEqual([]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    const health = await releaseHealth({ db }, { releaseId: "win-1.2.0" });
    expect(health).toEqual({
      releaseId: "win-1.2.0",
      counts: { downloaded: 0, installed: 360, failed: 40, launched: 351, crashed: 9 },
      failureRate: { rate: 0.1, reports: 400 },
      crashRate: { rate: 9 / 351, reports: 351 },
    });
  }, 60_000);

  it("refuses an unknown release with 404 and a bad report with 400, counting nothing", async () => {
    const app = await testApp();
    const { db } = await testDeps();
    const before = await releaseHealth({ db }, { releaseId: "win-1.2.0" });
    expectProblem(await request(app).post("/api/v1/updates/reports").send(report("x", "installed", { releaseId: "nope" })), 404, "release_not_found");
    for (const body of [report("x", "exploded"), report("", "installed"), report("x".repeat(129), "installed"), report("x", "failed", { error: "e".repeat(501) }), report("x", "installed", { fromVersion: "one" }), { ...report("x", "installed"), extra: 1 }]) {
      expectProblem(await request(app).post("/api/v1/updates/reports").send(body), 400, "invalid_request");
    }
    expect(await releaseHealth({ db }, { releaseId: "win-1.2.0" })).toEqual(before);
  });

  it("limits reports per client address on their own budget, apart from the other requests", async () => {
    const app = await testApp({ config: { reportsPerIpPerMinute: 3, rateLimit: { perIpPerMinute: 1_000, perUserPerMinute: 1_000 } } });
    for (let i = 0; i < 3; i += 1) expect((await request(app).post("/api/v1/updates/reports").send(report(`limit-${i}`, "downloaded"))).status).toBe(202);
    const refused = await request(app).post("/api/v1/updates/reports").send(report("limit-4", "downloaded"));
    expectProblem(refused, 429, "rate_limited");
    expect(refused.headers["retry-after"]).toBeDefined();
    expect((await request(app).get("/api/v1/health")).status).toBe(200);
  });
});
