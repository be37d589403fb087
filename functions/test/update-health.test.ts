import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import request from "supertest";
import { createApp } from "../src/app";
import { localServer } from "../src/local";
import { releaseHealth, releaseStatus, setRamp, stopRamp, tickRamps } from "../src/releases/service";
import { putRelease } from "./support/fixtures";
import { eventually, expectProblem, operatorDeps, resetEmulators, testApp, testDeps } from "./support/harness";

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

describe("automatic ramps (§19)", () => {
  beforeAll(resetEmulators);
  const HOUR = 3_600_000;
  const at = async (offsetMs: number) => ({ ...(await operatorDeps()), clock: () => new Date(Date.now() + offsetMs) });
  const reports = async (releaseId: string, event: string, count: number, from = 0) => {
    const app = await testApp();
    for (let i = from; i < from + count; i += 1) {
      expect((await request(app).post("/api/v1/updates/reports").send({ releaseId, stagingId: `ramp-app-${i}`, fromVersion: "1.0.0", event })).status).toBe(202);
    }
  };

  it("advances only a step that has lasted and is healthy, one move for two ticks at once, with audit entries", async () => {
    await putRelease("win-2.0.0", { version: "2.0.0", platform: "win32", arch: "x64", channel: "stable" });
    const status = await setRamp(await at(0), { releaseId: "win-2.0.0", steps: "1,5,100", every: "1", minReports: "5" });
    expect(status).toMatchObject({ rolloutPercentage: 1, ramp: { state: "running", step: "1 of 3 (1%)" } });
    await reports("win-2.0.0", "installed", 10);
    await reports("win-2.0.0", "launched", 10);
    expect(await tickRamps(await at(0.5 * HOUR))).toEqual([expect.objectContaining({ releaseId: "win-2.0.0", outcome: "wait", percentage: 1 })]);
    const concurrent = await at(2 * HOUR);
    const [first, second] = await Promise.all([tickRamps(concurrent), tickRamps(concurrent)]);
    expect([...first, ...second].map((move) => move.outcome).sort()).toEqual(["advance", "wait"]);
    expect((await releaseStatus(concurrent, { releaseId: "win-2.0.0" })).rolloutPercentage).toBe(5);
    expect(await tickRamps(await at(3.5 * HOUR))).toEqual([expect.objectContaining({ outcome: "advance", percentage: 100 })]);
    expect((await releaseStatus(await at(4 * HOUR), { releaseId: "win-2.0.0" })).ramp).toMatchObject({ state: "done", nextStepDueAt: null });
    const { db } = await testDeps();
    const audit = (await db.collection("auditLog").where("target", "==", "win-2.0.0").get()).docs.map((doc) => doc.get("action")).sort();
    expect(audit).toEqual(["release.ramp", "release.ramp.advance", "release.ramp.advance"]);
  });

  it("halts itself when failures exceed the bound with enough reports: rollout 0, a reason, and the release no longer offered", async () => {
    await putRelease("win-1.9.0", { version: "1.9.0", platform: "win32", arch: "arm64", channel: "stable" });
    await putRelease("win-2.1.0", { version: "2.1.0", platform: "win32", arch: "arm64", channel: "stable" });
    await setRamp(await at(0), { releaseId: "win-2.1.0", steps: "50,100", every: "24", minReports: "5", maxFailureRate: "0.1" });
    await reports("win-2.1.0", "installed", 5, 100);
    await reports("win-2.1.0", "failed", 5, 200);
    expect(await tickRamps(await at(HOUR))).toEqual([expect.objectContaining({ releaseId: "win-2.1.0", outcome: "halt", percentage: 0, reason: "failure rate 50.0% over 10 reports exceeds 10.0%" })]);
    const status = await releaseStatus(await at(HOUR), { releaseId: "win-2.1.0" });
    expect(status).toMatchObject({ rolloutPercentage: 0, haltReason: "failure rate 50.0% over 10 reports exceeds 10.0%", ramp: { state: "halted" }, failureRate: { rate: 0.5, reports: 10 } });
    const app = await testApp();
    await eventually(async () => {
      const offered = await request(app).get("/api/v1/releases/download/win32?arch=arm64");
      expect(offered.status).toBe(302);
      expect(offered.headers.location).toContain("Marketplace-Setup-1.9.0");
    });
    expect(await tickRamps(await at(2 * HOUR))).toEqual([]);
    const stopped = await stopRamp(await at(2 * HOUR), { releaseId: "win-2.1.0" });
    expect(stopped.ramp).toBeNull();
  });

  it("refuses steps that do not rise, or hours that are not a number, with a clear error and no change", async () => {
    await putRelease("win-2.2.0", { version: "2.2.0", platform: "linux", arch: "x64", channel: "stable" });
    for (const input of [{ steps: "5,1", every: "1" }, { steps: "0,50", every: "1" }, { steps: "1,500", every: "1" }, { steps: "1,5", every: "soon" }, { steps: "1,5", every: "-1" }]) {
      await expect(setRamp(await at(0), { releaseId: "win-2.2.0", ...input })).rejects.toMatchObject({ code: "invalid_request" });
    }
    expect((await releaseStatus(await at(0), { releaseId: "win-2.2.0" })).ramp).toBeNull();
  });
});
