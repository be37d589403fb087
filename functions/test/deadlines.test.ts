import { execFileSync } from "node:child_process";
import { createServer, type Server } from "node:net";
import request from "supertest";
import type { Express } from "express";
import { initializeApp } from "firebase-admin/app";
import { getStorage } from "firebase-admin/storage";
import { createApp } from "../src/app";
import { bucketStore } from "../src/core/storage";
import { countDocuments } from "./support/fixtures";
import { modulePackage } from "./support/packages";
import { bearer, createDeveloper, expectProblem, resetEmulators, signRequest, storedObjects, testApp, testDeps, type TestDeveloper } from "./support/harness";

/**
 * With the Firestore emulator frozen (SIGSTOP of the process the test run started), requests
 * answer 503 unavailable with Retry-After within the deadline, write nothing, and the service
 * answers normally again once it thaws.
 */
function firestorePid(): number {
  const port = process.env.FIRESTORE_EMULATOR_HOST!.split(":")[1];
  const row = execFileSync("ps", ["-eo", "pid=,args="])
    .toString()
    .split("\n")
    // The JVM itself, not the supervisor whose command line repeats its arguments.
    .find((line) => /^\s*\d+ \S*java /.test(line) && line.includes("CloudFirestore") && line.includes(`--port=${port}`));
  if (!row) throw new Error("The Firestore emulator of this test run was not found.");
  return Number(row.trim().split(/\s+/)[0]);
}

/** No package object and no module document: what a sign a backend failed must leave. */
async function expectNothingStored(): Promise<void> {
  expect(await storedObjects("modules/")).toEqual([]);
  expect(await countDocuments("modules")).toBe(0);
}

describe("deadlines", () => {
  let app: Express;
  let developer: TestDeveloper;
  let frozen: number | undefined;

  beforeAll(async () => {
    await resetEmulators();
    app = await testApp({ config: { deadlines: { callMs: 1500, requestMs: 2500 } } });
    developer = await createDeveloper("acme");
  });
  const freeze = () => {
    frozen = firestorePid();
    process.kill(frozen, "SIGSTOP");
  };
  const thaw = () => {
    if (frozen !== undefined) process.kill(frozen, "SIGCONT");
    frozen = undefined;
  };
  afterEach(thaw);

  it("answers 503 with Retry-After within the deadline while Firestore is frozen, and normally after", async () => {
    freeze();
    const started = Date.now();
    const profile = await request(app).get("/api/v1/users/me").set(bearer(developer));
    expectProblem(profile, 503, "unavailable");
    expect(profile.headers["retry-after"]).toBe("5");
    expect(Date.now() - started).toBeLessThan(2_400);
    // What needs no backend still answers.
    expect((await request(app).get("/api/v1/health")).status).toBe(200);
    thaw();
    expect((await request(app).get("/api/v1/users/me").set(bearer(developer))).status).toBe(200);
  }, 30_000);

  it("ends a request at its overall deadline even when one call may take longer", async () => {
    const impatient = await testApp({ config: { deadlines: { callMs: 10_000, requestMs: 1_000 } } });
    freeze();
    const started = Date.now();
    expectProblem(await request(impatient).get("/api/v1/modules").set(bearer(developer)), 503, "unavailable");
    expect(Date.now() - started).toBeLessThan(1_900);
  }, 30_000);

  it("stores nothing of a sign that meets a frozen Firestore", async () => {
    freeze();
    expectProblem(await signRequest(app, developer, await modulePackage()), 503, "unavailable");
    thaw();
    await expectNothingStored();
  }, 30_000);
});

/**
 * A Cloud Storage that cuts every connection once the request starts to arrive, as an overloaded
 * or restarting backend does mid-upload (the client sees EPIPE or ECONNRESET): a backend failure,
 * answered 503 with Retry-After, never a 500, and nothing is recorded.
 */
describe("a Storage that cuts connections", () => {
  let cutter: Server;
  let app: Express;
  let developer: TestDeveloper;

  beforeAll(async () => {
    await resetEmulators();
    cutter = createServer((socket) => socket.once("data", () => socket.destroy()));
    await new Promise<void>((resolve) => cutter.listen(0, "127.0.0.1", resolve));
    const deps = await testDeps();
    // The Storage client reads its emulator's address when it is made.
    const storageHost = process.env.STORAGE_EMULATOR_HOST;
    process.env.STORAGE_EMULATOR_HOST = `127.0.0.1:${(cutter.address() as { port: number }).port}`;
    try {
      const bucket = getStorage(initializeApp({ projectId: deps.config.projectId }, "test-cut-storage")).bucket(deps.config.storageBucket);
      app = createApp({ ...deps, store: bucketStore(bucket, deps.clock) });
    } finally {
      process.env.STORAGE_EMULATOR_HOST = storageHost;
    }
    developer = await createDeveloper("acme");
  });
  afterAll(() => new Promise((resolve) => cutter.close(resolve)));

  it("answers a sign 503 unavailable with Retry-After, and records nothing", async () => {
    const response = await signRequest(app, developer, await modulePackage());
    expectProblem(response, 503, "unavailable");
    expect(response.headers["retry-after"]).toBe("5");
    await expectNothingStored();
  }, 30_000);
});
