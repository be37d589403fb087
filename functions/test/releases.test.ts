import request from "supertest";
import { releaseListSchema } from "../src/releases/schemas";
import { putRelease, sha256Hex } from "./support/fixtures";
import { expectProblem, resetEmulators, testApp, testDeps } from "./support/harness";

describe("releases", () => {
  beforeAll(async () => {
    await resetEmulators();
    await putRelease("win-1.9.0", { version: "1.9.0", platform: "win32", arch: "x64", channel: "stable", notes: "Older." });
    await putRelease("win-1.10.0", { version: "1.10.0", platform: "win32", arch: "x64", channel: "stable" });
    await putRelease("win-1.10.0-arm", { version: "1.10.0", platform: "win32", arch: "arm64", channel: "stable" });
    await putRelease("win-1.11.0-beta.2", { version: "1.11.0-beta.2", platform: "win32", arch: "x64", channel: "beta" });
    await putRelease("mac-2.0.0", { version: "2.0.0", platform: "darwin", arch: "arm64", channel: "stable" });
  });

  describe("GET /releases", () => {
    it("lists every release, highest semver first (1.10.0 above 1.9.0)", async () => {
      const response = await request(await testApp()).get("/api/v1/releases");
      expect(response.status).toBe(200);
      expect(releaseListSchema.parse(response.body)).toBeTruthy();
      expect(response.body.items.map((r: { version: string }) => r.version)).toEqual([
        "2.0.0",
        "1.11.0-beta.2",
        "1.10.0",
        "1.10.0",
        "1.9.0",
      ]);
      const older = response.body.items.find((r: { id: string }) => r.id === "win-1.9.0");
      expect(older).toEqual({
        id: "win-1.9.0",
        version: "1.9.0",
        platform: "win32",
        arch: "x64",
        channel: "stable",
        fileName: "Marketplace-Setup-1.9.0-x64.exe",
        size: expect.any(Number),
        sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
        // Written by another tool, without the SHA-512 (`release backfill-sha512` adds it).
        sha512: null,
        notes: "Older.",
        publishedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        rolloutPercentage: 100,
      });
      expect(older).not.toHaveProperty("storagePath");
    });

    it("filters by platform and channel", async () => {
      const app = await testApp();
      const win = await request(app).get("/api/v1/releases?platform=win32&channel=stable");
      expect(win.body.items.map((r: { id: string }) => r.id).sort()).toEqual(["win-1.10.0", "win-1.10.0-arm", "win-1.9.0"]);
      const beta = await request(app).get("/api/v1/releases?channel=beta");
      expect(beta.body.items.map((r: { id: string }) => r.id)).toEqual(["win-1.11.0-beta.2"]);
    });

    it("rejects unknown filter values and unknown parameters with 400 and the offending fields", async () => {
      const app = await testApp();
      const badValue = await request(app).get("/api/v1/releases?platform=amiga");
      expectProblem(badValue, 400, "invalid_request");
      expect(badValue.body.errors).toEqual([{ path: "platform", message: expect.any(String) }]);
      const unknown = await request(app).get("/api/v1/releases?sort=date");
      expectProblem(unknown, 400, "invalid_request");
      expect(unknown.body.errors).toEqual([{ path: "sort", message: "Unknown field." }]);
    });
  });

  describe("GET /releases/download/win32", () => {
    it("redirects (302, no-store) to a signed URL of the highest-semver stable x64 installer, whose bytes match", async () => {
      const response = await request(await testApp()).get("/api/v1/releases/download/win32");
      expect(response.status).toBe(302);
      expect(response.headers["cache-control"]).toBe("no-store");
      const location = new URL(response.headers.location);
      expect(location.pathname).toContain("win-1.10.0/Marketplace-Setup-1.10.0-x64.exe");
      expect(location.searchParams.get("X-Goog-Algorithm")).toBe("GOOG4-RSA-SHA256");
      expect(Number(location.searchParams.get("X-Goog-Expires"))).toBeLessThanOrEqual(900);
      const download = await fetch(location);
      expect(download.status).toBe(200);
      const listed = (await request(await testApp()).get("/api/v1/releases")).body.items.find(
        (r: { id: string }) => r.id === "win-1.10.0",
      );
      expect(sha256Hex(await download.arrayBuffer())).toBe(listed.sha256);
    });

    it("honours channel and arch, and the configured URL lifetime", async () => {
      const app = await testApp({ config: { signedUrlTtlSeconds: 120 } });
      const beta = await request(app).get("/api/v1/releases/download/win32?channel=beta");
      expect(beta.headers.location).toContain("Marketplace-Setup-1.11.0-beta.2-x64.exe");
      expect(new URL(beta.headers.location).searchParams.get("X-Goog-Expires")).toBe("120");
      const arm = await request(app).get("/api/v1/releases/download/win32?arch=arm64");
      expect(arm.headers.location).toContain("win-1.10.0-arm/");
    });

    it("answers 404 release_not_found when the channel has no Windows release", async () => {
      const { db } = await testDeps();
      await db.collection("releases").doc("win-1.11.0-beta.2").delete();
      try {
        expectProblem(await request(await testApp()).get("/api/v1/releases/download/win32?channel=beta"), 404, "release_not_found");
      } finally {
        await putRelease("win-1.11.0-beta.2", { version: "1.11.0-beta.2", platform: "win32", arch: "x64", channel: "beta" });
      }
    });

    it("rejects a bad channel or arch with 400", async () => {
      const app = await testApp();
      expectProblem(await request(app).get("/api/v1/releases/download/win32?channel=nightly"), 400, "invalid_request");
      expectProblem(await request(app).get("/api/v1/releases/download/win32?arch=ia32"), 400, "invalid_request");
    });
  });

  describe("GET /releases/download/:platform and /releases/:releaseId/download", () => {
    it("serves darwin (arm64 by default) and linux beside win32, and 400 for another platform", async () => {
      await putRelease("linux-1.0.0", { version: "1.0.0", platform: "linux", arch: "x64", channel: "stable" });
      const app = await testApp();
      expect((await request(app).get("/api/v1/releases/download/darwin")).headers.location).toContain("mac-2.0.0/");
      expect((await request(app).get("/api/v1/releases/download/linux")).headers.location).toContain("linux-1.0.0/");
      expectProblem(await request(app).get("/api/v1/releases/download/darwin?arch=x64"), 404, "release_not_found");
      expectProblem(await request(app).get("/api/v1/releases/download/amiga"), 400, "invalid_request");
    });

    it("redirects to a fresh signed URL of one release, 404 for an unknown one", async () => {
      const app = await testApp();
      const response = await request(app).get("/api/v1/releases/win-1.9.0/download");
      expect(response.status).toBe(302);
      expect(response.headers["cache-control"]).toBe("no-store");
      expect(response.headers.location).toContain("win-1.9.0/Marketplace-Setup-1.9.0-x64.exe");
      expectProblem(await request(app).get("/api/v1/releases/nope/download"), 404, "release_not_found");
    });
  });
});
