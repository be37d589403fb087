import { FieldValue } from "firebase-admin/firestore";
import request from "supertest";
import { rebuildVersionSummaries } from "../src/publishing/service";
import type { Express } from "express";
import { modulePackage } from "./support/packages";
import { bearer, createDeveloper, createUser, expectProblem, publishModule, resetEmulators, testApp, testDeps, type TestDeveloper, type TestUser } from "./support/harness";

/** Module versions, app compatibility and yanking (API §9). */
describe("module versions", () => {
  let app: Express;
  let acme: TestDeveloper;
  let user: TestUser;

  const release = (version: string, bounds: Record<string, string> = {}) => publishModule(acme, { id: "acme.charts", version, ...bounds });
  const yank = (version: string, reason?: string) => request(app).post("/api/v1/developers/modules/yank").set(bearer(acme)).send({ moduleId: "acme.charts", version, ...(reason ? { reason } : {}) });
  const listed = async (query = "") => (await request(app).get(`/api/v1/modules${query}`)).body.items;

  beforeAll(async () => {
    await resetEmulators();
    // No memory between requests: each answer reflects the change just made.
    app = await testApp({ config: { memoryCacheMs: 0 } });
    acme = await createDeveloper("acme");
    user = await createUser();
    await release("1.0.0");
    await release("2.0.0", { minAppVersion: "2.0.0", maxAppVersion: "2.9.9" });
    await release("3.0.0", { minAppVersion: "3.0.0" });
  });

  it("adds the compatible version to the listing and downloads it by app version", async () => {
    expect((await listed("?appVersion=2.5.0"))[0]).toMatchObject({ latestVersion: "3.0.0", compatibleVersion: "2.0.0" });
    expect((await listed("?appVersion=1.0.0"))[0].compatibleVersion).toBe("1.0.0");
    expect((await listed())[0]).not.toHaveProperty("compatibleVersion");
    const download = await request(app).get("/api/v1/modules/download/acme.charts?appVersion=2.9.9").set(bearer(user));
    expect(download.body.version).toBe("2.0.0");
    const confirm = await request(app).post("/api/v1/modules/confirm").set(bearer(user)).send({ moduleId: "acme.charts", appVersion: "3.1.0" });
    expect(confirm.body.version).toBe("3.0.0");
  });

  it("answers the batch update check from the module documents", async () => {
    const response = await request(app)
      .post("/api/v1/modules/updates")
      .set(bearer(user))
      .send({ appVersion: "2.5.0", installed: [{ moduleId: "acme.charts", version: "1.0.0" }, { moduleId: "acme.unknown", version: "1.0.0" }] });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ items: [{ moduleId: "acme.charts", installedVersion: "1.0.0", version: "2.0.0", usable: true, yanked: false, revoked: false, blocked: false }] });
    const current = await request(app).post("/api/v1/modules/updates").set(bearer(user)).send({ appVersion: "2.5.0", installed: [{ moduleId: "acme.charts", version: "2.0.0" }] });
    expect(current.body.items).toEqual([]);
    expectProblem(await request(app).post("/api/v1/modules/updates").set(bearer(user)).send({ appVersion: "2.5.0", installed: [] }), 400, "invalid_request");
  });

  it("yanks: never latest or compatible again, downloadable by explicit version only, and reported to installs", async () => {
    const yanked = await yank("3.0.0", "breaks charts");
    expect(yanked.status).toBe(200);
    expect(yanked.body).toEqual({ moduleId: "acme.charts", version: "3.0.0", yankedAt: expect.any(String) });
    // 1.0.0 has no bounds: for app 3.5.0 it is what is left.
    expect((await listed("?appVersion=3.5.0"))[0]).toMatchObject({ latestVersion: "2.0.0", compatibleVersion: "1.0.0" });
    expect((await request(app).get("/api/v1/modules/download/acme.charts").set(bearer(user))).body.version).toBe("2.0.0");
    expect((await request(app).get("/api/v1/modules/download/acme.charts?appVersion=3.5.0").set(bearer(user))).body.version).toBe("1.0.0");
    expect((await request(app).get("/api/v1/modules/download/acme.charts?version=3.0.0").set(bearer(user))).body.version).toBe("3.0.0");
    const updates = await request(app).post("/api/v1/modules/updates").set(bearer(user)).send({ appVersion: "3.5.0", installed: [{ moduleId: "acme.charts", version: "3.0.0" }] });
    expect(updates.body.items).toEqual([{ moduleId: "acme.charts", installedVersion: "3.0.0", version: "1.0.0", usable: true, yanked: true, revoked: false, blocked: false }]);
    const mine = await request(app).get("/api/v1/developers/modules").set(bearer(acme));
    expect(mine.body.items[0].versions.find((v: { version: string }) => v.version === "3.0.0")).toMatchObject({ yankedAt: expect.any(String), yankReason: "breaks charts" });
    // A new version must still be greater than every version ever published.
    await request(app).post("/api/v1/developers/modules/sign").set(bearer(acme)).set("Content-Type", "application/octet-stream").send(await modulePackage({ version: "2.5.0" }));
    expectProblem(await request(app).post("/api/v1/developers/modules/publish").set(bearer(acme)).send({ moduleId: "acme.charts", version: "2.5.0" }), 409, "version_not_newer");
    expect((await request(app).post("/api/v1/developers/modules/unyank").set(bearer(acme)).send({ moduleId: "acme.charts", version: "3.0.0" })).body.yankedAt).toBeNull();
    expect((await listed())[0].latestVersion).toBe("3.0.0");
  });

  it("takes a module out of the listing when every version is yanked, and refuses others' and unpublished versions", async () => {
    for (const version of ["1.0.0", "2.0.0", "3.0.0"]) expect((await yank(version)).status).toBe(200);
    expect(await listed()).toEqual([]);
    expectProblem(await request(app).get("/api/v1/modules/download/acme.charts").set(bearer(user)), 404, "module_not_found");
    expectProblem(await yank("2.5.0"), 404, "version_not_found");
    expectProblem(await yank("9.9.9"), 404, "version_not_found");
    const other = await createDeveloper("globex");
    expectProblem(await request(app).post("/api/v1/developers/modules/yank").set(bearer(other)).send({ moduleId: "acme.charts", version: "1.0.0" }), 403, "not_owner");
    expect((await request(app).post("/api/v1/developers/modules/unyank").set(bearer(acme)).send({ moduleId: "acme.charts", version: "2.0.0" })).status).toBe(200);
    expect((await listed("?appVersion=1.5.0"))[0]).toMatchObject({ latestVersion: "2.0.0", compatibleVersion: null });
    expectProblem(await request(app).get("/api/v1/modules/download/acme.charts?appVersion=1.5.0").set(bearer(user)), 404, "no_compatible_version");
    const noReplacement = await request(app).post("/api/v1/modules/updates").set(bearer(user)).send({ appVersion: "1.5.0", installed: [{ moduleId: "acme.charts", version: "1.0.0" }] });
    expect(noReplacement.body.items).toEqual([{ moduleId: "acme.charts", installedVersion: "1.0.0", version: null, usable: true, yanked: true, revoked: false, blocked: false }]);
  });

  it("rebuilds the version summary of a module published before it existed, idempotently", async () => {
    const { db } = await testDeps();
    // What an earlier version of the service left: no summary, no highest published version.
    await db.collection("modules").doc("acme.charts").update({ versions: FieldValue.delete(), highestPublishedVersion: FieldValue.delete() });
    expect(await rebuildVersionSummaries({ db })).toEqual({ rebuilt: ["acme.charts"] });
    // Again: nothing is left to rebuild, and nothing is written (no change reaches the caches).
    const before = (await db.collection("modules").doc("acme.charts").get()).updateTime;
    expect(await rebuildVersionSummaries({ db })).toEqual({ rebuilt: [] });
    expect((await db.collection("modules").doc("acme.charts").get()).updateTime).toEqual(before);
    expect((await listed("?appVersion=1.5.0"))[0]).toMatchObject({ latestVersion: "2.0.0", compatibleVersion: null });
    expect((await listed("?appVersion=2.5.0"))[0]).toMatchObject({ compatibleVersion: "2.0.0" });
  });
});
