import request from "supertest";
import { backendCallCounts } from "../src/core/deadline";
import { putRelease } from "./support/fixtures";
import { bearer, createUser, expectProblem, resetEmulators, testApp, type TestUser } from "./support/harness";

/** API §1 "Caching": shared answers are validated and cacheable; anything caller-specific is not. */
describe("HTTP caching", () => {
  let user: TestUser;
  beforeAll(async () => {
    await resetEmulators();
    user = await createUser();
    await putRelease("win32-x64-stable-1.0.0", { version: "1.0.0", platform: "win32", arch: "x64", channel: "stable" });
  });

  it.each(["/api/v1/releases", "/api/v1/signing-keys", "/api/v1/openapi.json", "/api/v1/modules"])(
    "%s carries a strong ETag and public Cache-Control, and answers a matching If-None-Match with 304",
    async (path) => {
      const app = await testApp({ config: { cache: { maxAgeSeconds: 30, sMaxAgeSeconds: 120 } } });
      const first = await request(app).get(path);
      expect(first.status).toBe(200);
      expect(first.headers.etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
      expect(first.headers["cache-control"]).toBe("public, max-age=30, s-maxage=120");
      const again = await request(app).get(path).set("If-None-Match", first.headers.etag);
      expect(again.status).toBe(304);
      expect(again.text ?? "").toBe("");
      expect((await request(app).get(path).set("If-None-Match", `"other", W/${first.headers.etag}`)).status).toBe(304);
      expect((await request(app).get(path).set("If-None-Match", '"other"')).status).toBe(200);
    },
  );

  it("changes the ETag when the answer changes", async () => {
    const app = await testApp();
    const before = await request(app).get("/api/v1/releases?platform=linux");
    await putRelease("linux-x64-stable-2.0.0", { version: "2.0.0", platform: "linux", arch: "x64", channel: "stable" });
    const after = await request(await testApp()).get("/api/v1/releases?platform=linux");
    expect(after.headers.etag).not.toBe(before.headers.etag);
  });

  it("shares GET /modules only without a token, and always varies by Authorization", async () => {
    const app = await testApp();
    const anonymous = await request(app).get("/api/v1/modules");
    expect(anonymous.headers.vary).toMatch(/Authorization/);
    const personal = await request(app).get("/api/v1/modules").set(bearer(user));
    expect(personal.status).toBe(200);
    expect(personal.headers["cache-control"]).toBe("private, no-store");
    expect(personal.headers.etag).toBeUndefined();
    expect(personal.headers.vary).toMatch(/Authorization/);
    // A cross-origin answer varies by both.
    const crossOrigin = await request(await testApp({ config: { corsOrigins: ["https://portal.example.test"] } }))
      .get("/api/v1/modules")
      .set("Origin", "https://portal.example.test");
    expect(crossOrigin.headers.vary?.split(/,\s*/).sort()).toEqual(["Authorization", "Origin"]);
  });

  it("keeps caller-specific answers, redirects and errors out of every cache", async () => {
    const app = await testApp();
    // Signed answers (§15) add no-transform: nothing between may re-encode what their digest covers.
    expect((await request(app).get("/api/v1/users/me").set(bearer(user))).headers["cache-control"]).toBe("private, no-store, no-transform");
    expect((await request(app).get("/api/v1/releases/download/win32")).headers["cache-control"]).toBe("no-store");
    const missing = await request(app).get("/api/v1/releases/download/win32?channel=beta");
    expectProblem(missing, 404, "release_not_found");
    expect(missing.headers["cache-control"]).toBe("private, no-store");
    expect((await request(app).get("/api/v1/health")).headers["cache-control"]).toBe("private, no-store");
  });
});

describe("public data from memory", () => {
  beforeAll(resetEmulators);
  const firestoreCalls = () => backendCallCounts().Firestore ?? 0;

  it("answers GET /releases, /signing-keys, /openapi.json and the anonymous listing of a warm instance with no Firestore call", async () => {
    await putRelease("win32-x64-stable-3.0.0", { version: "3.0.0", platform: "win32", arch: "x64", channel: "stable" });
    const app = await testApp({ config: { memoryCacheMs: 60_000 } });
    const paths = ["/api/v1/releases", "/api/v1/releases?platform=win32", "/api/v1/releases/download/win32", "/api/v1/signing-keys", "/api/v1/openapi.json", "/api/v1/modules", "/api/v1/modules?limit=5"];
    for (const path of paths) expect((await request(app).get(path)).status).toBeLessThan(400);
    const before = firestoreCalls();
    for (const path of paths) expect((await request(app).get(path)).status).toBeLessThan(400);
    expect(firestoreCalls() - before).toBe(0);
  });

  it("reads again once the memory's lifetime is over", async () => {
    const app = await testApp({ config: { memoryCacheMs: 0 } });
    const before = firestoreCalls();
    await request(app).get("/api/v1/releases");
    await request(app).get("/api/v1/releases");
    expect(firestoreCalls() - before).toBe(2);
  });
});

describe("the release catalog", () => {
  beforeAll(resetEmulators);

  it("follows the releases collection, so a yank leaves the list and the redirect of a warm instance at once", async () => {
    const deps = await (await import("./support/harness")).testDeps();
    const { publishRelease, yankRelease } = await import("../src/releases/service");
    const { Readable } = await import("node:stream");
    for (const version of ["1.0.0", "1.1.0"]) {
      await publishRelease(deps, { version, platform: "linux", arch: "x64", fileName: `Setup-${version}` }, { content: Readable.from([Buffer.from(version)]), size: version.length });
    }
    const app = await testApp({ config: { memoryCacheMs: 600_000 } });
    expect((await request(app).get("/api/v1/releases")).body.items.map((item: { version: string }) => item.version)).toEqual(["1.1.0", "1.0.0"]);
    await yankRelease(deps, { releaseId: "linux-x64-stable-1.1.0" });
    // The listener's update arrives within moments, long before the memory's lifetime.
    const deadline = Date.now() + 5_000;
    let versions: string[] = [];
    while (Date.now() < deadline) {
      versions = (await request(app).get("/api/v1/releases")).body.items.map((item: { version: string }) => item.version);
      if (versions.length === 1) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(versions).toEqual(["1.0.0"]);
    expect((await request(app).get("/api/v1/releases/download/linux")).headers.location).toContain("linux-x64-stable-1.0.0/");
  });
});
