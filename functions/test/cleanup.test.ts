import { cloudLogger } from "../src/core/logger";
import request from "supertest";
import { removeOrphanedObjects } from "../src/cleanup/service";
import { putRelease } from "./support/fixtures";
import { modulePackage } from "./support/packages";
import { bearer, createDeveloper, resetEmulators, storedObjects, testApp, testBucket, testDeps } from "./support/harness";

const HOUR = 60 * 60 * 1000;

describe("the scheduled clean-up of orphaned objects", () => {
  beforeEach(resetEmulators);

  async function arrange() {
    const developer = await createDeveloper("acme");
    const app = await testApp();
    const signed = await request(app).post("/api/v1/developers/modules/sign").set(bearer(developer)).set("Content-Type", "application/octet-stream")
      .send(await modulePackage());
    expect(signed.status).toBe(201);
    await putRelease("win32-x64-stable-1.0.0", { version: "1.0.0", platform: "win32", arch: "x64", channel: "stable" });
    // What a request that died between storing and recording leaves behind.
    const bucket = await testBucket();
    await bucket.file("modules/acme.charts/9.9.9/dead.mpkg").save(Buffer.from("orphan package"), { resumable: false });
    await bucket.file("releases/gone/upload/Setup.exe").save(Buffer.from("orphan installer"), { resumable: false });
    return storedObjects("");
  }

  it("removes objects no version or release references once they are older than an hour, and nothing else", async () => {
    const before = await arrange();
    expect(before).toHaveLength(4);
    const deps = await testDeps();
    // Within the hour of grace, nothing goes: a document may still be on its way.
    expect((await removeOrphanedObjects(deps)).removed).toEqual([]);
    const later = { ...deps, clock: () => new Date(Date.now() + 2 * HOUR) };
    const result = await removeOrphanedObjects(later);
    expect(result.checked).toBe(4);
    expect(result.removed.sort()).toEqual(["modules/acme.charts/9.9.9/dead.mpkg", "releases/gone/upload/Setup.exe"]);
    expect(await storedObjects("")).toEqual(before.filter((path) => !result.removed.includes(path)));
  });

  it("runs as the exported scheduled function", async () => {
    const before = await arrange();
    const { cleanup } = await import("../src/index");
    // The deployed function logs to Cloud Logging (structured lines on stdout): read here, not printed.
    const logged = jest.spyOn(cloudLogger, "info").mockImplementation(() => undefined);
    try {
      await cleanup.run({ scheduleTime: new Date().toISOString(), jobName: "cleanup" } as Parameters<typeof cleanup.run>[0]);
      expect(logged.mock.calls).toEqual([["orphaned objects removed", expect.objectContaining({ checked: before.length, removed: 0 })]]);
    } finally {
      logged.mockRestore();
    }
    // Everything is younger than the grace period: the run finds, and keeps, all of it.
    expect(await storedObjects("")).toEqual(before);
  });
});
