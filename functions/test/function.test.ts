import firebaseFunctionsTest from "firebase-functions-test";
import { cloudLogger } from "../src/core/logger";
import type { RequestListener } from "node:http";
import request from "supertest";
import { modulePackage } from "./support/packages";
import { bearer, createDeveloper, projectId, resetEmulators } from "./support/harness";

/**
 * The exported Cloud Function itself (what `firebase deploy` ships), not only createApp: it
 * builds the app from params and secrets on its first request and serves /api/v1.
 */
describe("the exported api function", () => {
  const functionsTest = firebaseFunctionsTest({ projectId });
  const afterAllRestore: (() => void)[] = [];
  afterAll(() => {
    afterAllRestore.forEach((restore) => restore());
    functionsTest.cleanup();
  });
  beforeAll(resetEmulators);

  it("serves /api/v1 through the onRequest handler", async () => {
    // onRequest's handler takes Express-typed requests; Node's http server hands it plain ones,
    // as the Functions runtime's Express does.
    const api = (await import("../src/index")).api as unknown as RequestListener;
    // Its request log goes to Cloud Logging (structured lines on stdout): read here, not printed.
    const logged = jest.spyOn(cloudLogger, "info").mockImplementation(() => undefined);
    afterAllRestore.push(() => logged.mockRestore());
    const health = await request(api).get("/api/v1/health").set("X-Request-Id", "smoke-1");
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: "ok" });
    expect(health.headers["x-request-id"]).toBe("smoke-1");
    expect(logged.mock.calls).toContainEqual(["request", expect.objectContaining({ requestId: "smoke-1", method: "GET", path: "/api/v1/health", status: 200 })]);

    const releases = await request(api).get("/api/v1/releases");
    expect(releases.status).toBe(200);
    expect(releases.body).toEqual({ items: [] });

    const missing = await request(api).get("/api/v1/users/me");
    expect(missing.status).toBe(401);
    expect(missing.headers["content-type"]).toMatch(/^application\/problem\+json/);
  });

  it("applies its limits to the body the Functions runtime has already read (req.rawBody)", async () => {
    const api = (await import("../src/index")).api as unknown as RequestListener;
    // What the Functions Framework does before the app runs: read the whole body into rawBody.
    const functionsRuntime: RequestListener = (req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        (req as typeof req & { rawBody: Buffer }).rawBody = Buffer.concat(chunks);
        api(req, res);
      });
    };
    const developer = await createDeveloper("acme");
    const bytes = await modulePackage();
    const signed = await request(functionsRuntime)
      .post("/api/v1/developers/modules/sign")
      .set(bearer(developer))
      .set("Content-Type", "application/octet-stream")
      .send(bytes);
    expect(signed.status).toBe(201);
    expect(signed.body.size).toBe(bytes.length);

    const tooBig = await request(functionsRuntime)
      .post("/api/v1/modules/confirm")
      .set(bearer(developer))
      .set("Content-Type", "application/json")
      .send(JSON.stringify({ moduleId: "acme.charts", deviceId: "x".repeat(100 * 1024) }));
    expect(tooBig.status).toBe(413);
    expect(tooBig.body.code).toBe("payload_too_large");
  });
});

describe("the exported api function without PUBLIC_BASE_URL", () => {
  it("refuses to start: a 503 problem for every request, and one log line that says why", async () => {
    const saved = { ...process.env };
    // A deployed instance: no emulator, no PUBLIC_BASE_URL.
    for (const name of ["FIRESTORE_EMULATOR_HOST", "FUNCTIONS_EMULATOR", "PUBLIC_BASE_URL"]) delete process.env[name];
    const logged = jest.spyOn(console, "error").mockImplementation(() => {});
    try {
      let api!: RequestListener;
      await jest.isolateModulesAsync(async () => {
        api = (await import("../src/index")).api as unknown as RequestListener;
      });
      for (const path of ["/api/v1/health", "/api/v1/updates/electron/win32/x64/latest.yml"]) {
        const response = await request(api).get(path).set("X-Request-Id", "boot-1");
        expect({ status: response.status, type: response.headers["content-type"], code: response.body.code, requestId: response.body.requestId }).toEqual({
          status: 503,
          type: expect.stringMatching(/^application\/problem\+json/),
          code: "unavailable",
          requestId: "boot-1",
        });
      }
      const lines = logged.mock.calls.map((call) => String(call[0]));
      expect(lines.filter((line) => line.includes("api cannot start: PUBLIC_BASE_URL is not set"))).toHaveLength(1);
    } finally {
      logged.mockRestore();
      process.env = saved;
    }
  });
});
