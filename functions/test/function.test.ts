import firebaseFunctionsTest from "firebase-functions-test";
import type { RequestListener } from "node:http";
import request from "supertest";
import { projectId, resetEmulators } from "./harness";

/**
 * The exported Cloud Function itself (what `firebase deploy` ships), not only createApp: it
 * builds the app from params and secrets on its first request and serves /api/v1.
 */
describe("the exported api function", () => {
  const functionsTest = firebaseFunctionsTest({ projectId });
  afterAll(() => functionsTest.cleanup());
  beforeAll(resetEmulators);

  it("serves /api/v1 through the onRequest handler", async () => {
    // onRequest's handler takes Express-typed requests; Node's http server hands it plain ones,
    // as the Functions runtime's Express does.
    const api = (await import("../src/index")).api as unknown as RequestListener;
    const health = await request(api).get("/api/v1/health").set("X-Request-Id", "smoke-1");
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: "ok" });
    expect(health.headers["x-request-id"]).toBe("smoke-1");

    const releases = await request(api).get("/api/v1/releases");
    expect(releases.status).toBe(200);
    expect(releases.body).toEqual({ items: [] });

    const missing = await request(api).get("/api/v1/users/me");
    expect(missing.status).toBe(401);
    expect(missing.headers["content-type"]).toMatch(/^application\/problem\+json/);
  });
});
