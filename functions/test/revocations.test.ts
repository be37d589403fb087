import type { JSONWebKeySet } from "jose";
import request from "supertest";
import { acceptRevocationList, isRevoked, type RevocationList } from "../../docs/examples/verify-revocations";
import { addToBlocklist } from "../src/checks/blocklist";
import { revokeModule, unrevokeModule } from "../src/revocations/service";
import { sha256Hex } from "./support/fixtures";
import { bearer, createDeveloper, createUser, expectProblem, operatorDeps, otherInstanceApp, publishModule, resetEmulators, testApp, testDeps, type TestDeveloper, type TestUser } from "./support/harness";

/** Contract §14: the kill switch and the signed list the desktop app checks offline. */
describe("revocation", () => {
  let acme: TestDeveloper;
  let user: TestUser;
  let packages: Record<string, Buffer>;
  beforeEach(async () => {
    await resetEmulators();
    acme = await createDeveloper("acme");
    user = await createUser();
    packages = {};
    for (const version of ["1.0.0", "1.1.0", "2.0.0"]) {
      packages[version] = await publishModule(acme, { id: "acme.charts", name: "Charts", version, summary: "Charts." });
    }
  });

  const signingKeys = async () => (await request(await testApp()).get("/api/v1/signing-keys")).body as JSONWebKeySet;
  const revocations = async (app?: Awaited<ReturnType<typeof testApp>>) => (await request(app ?? (await testApp())).get("/api/v1/revocations")).body.list as string;
  const download = async (query = "") => request(await testApp()).get(`/api/v1/modules/download/acme.charts${query}`).set(bearer(user));
  const updates = async (version: string) =>
    request(await testApp()).post("/api/v1/modules/updates").set(bearer(user)).send({ appVersion: "1.0.0", installed: [{ moduleId: "acme.charts", version }] });
  const listedIds = async () => (await request(await testApp()).get("/api/v1/modules")).body.items.map((item: { id: string; latestVersion: string }) => `${item.id}@${item.latestVersion}`);

  it("revoking one version, then all: 410s, the default download, the update check, the listing and a growing, verifiable list", async () => {
    const jwks = await signingKeys();
    let kept: RevocationList = await acceptRevocationList(await revocations(), jwks, null);
    expect(kept).toMatchObject({ serial: 0, entries: [] });

    await revokeModule(await operatorDeps(), { moduleId: "acme.charts", version: "2.0.0", reason: "Exfiltrates documents." });
    const revoked = await download("?version=2.0.0");
    expectProblem(revoked, 410, "module_revoked");
    expect(revoked.body.detail).toContain("Exfiltrates documents.");
    expectProblem(await request(await testApp()).post("/api/v1/modules/confirm").set(bearer(user)).send({ moduleId: "acme.charts", version: "2.0.0" }), 410, "module_revoked");
    expect((await download()).body.version).toBe("1.1.0");
    expect((await updates("2.0.0")).body.items).toEqual([{ moduleId: "acme.charts", installedVersion: "2.0.0", version: "1.1.0", usable: true, yanked: false, revoked: true, blocked: false }]);
    expect(await listedIds()).toEqual(["acme.charts@1.1.0"]);

    const first = await acceptRevocationList(await revocations(), jwks, kept);
    expect(first.serial).toBe(1);
    expect(first.entries).toEqual([{ moduleId: "acme.charts", version: "2.0.0", sha256: sha256Hex(packages["2.0.0"]), reason: "Exfiltrates documents.", revokedAt: expect.any(String) }]);
    expect(first.exp - first.iat).toBeLessThanOrEqual(7 * 24 * 3600);
    expect(isRevoked(first, { moduleId: "acme.charts", version: "2.0.0", sha256: sha256Hex(packages["2.0.0"]) })).toBeTruthy();
    expect(isRevoked(first, { moduleId: "acme.charts", version: "1.1.0", sha256: sha256Hex(packages["1.1.0"]) })).toBeNull();
    kept = first;

    await revokeModule(await operatorDeps(), { moduleId: "acme.charts", reason: "Publisher compromised." });
    expectProblem(await download(), 410, "module_revoked");
    expectProblem(await download("?version=1.0.0"), 410, "module_revoked");
    expect((await updates("1.0.0")).body.items).toEqual([{ moduleId: "acme.charts", installedVersion: "1.0.0", version: null, usable: true, yanked: false, revoked: true, blocked: false }]);
    expect(await listedIds()).toEqual([]);
    const second = await acceptRevocationList(await revocations(), jwks, kept);
    expect(second.serial).toBe(2);
    expect(second.entries).toEqual([expect.objectContaining({ moduleId: "acme.charts", version: "*", sha256: null, reason: "Publisher compromised." })]);
    expect(isRevoked(second, { moduleId: "acme.charts", version: "1.0.0", sha256: sha256Hex(packages["1.0.0"]) })).toBeTruthy();

    // A replayed older list, or an expired one, is refused by the app's check.
    await expect(acceptRevocationList(await signedWithSerial(0), jwks, second)).rejects.toThrow("older than the one kept");
    await expect(acceptRevocationList(await revocations(), jwks, null, new Date(Date.now() + 8 * 24 * 3600 * 1000))).rejects.toThrow(/exp/);

    await unrevokeModule(await operatorDeps(), { moduleId: "acme.charts" });
    expect((await download()).body.version).toBe("2.0.0");
    expect(await listedIds()).toEqual(["acme.charts@2.0.0"]);
    const third = await acceptRevocationList(await revocations(), jwks, second);
    expect(third).toMatchObject({ serial: 3, entries: [] });
  });

  /** An older list, as an attacker could replay it: the service's own signature over serial 0. */
  async function signedWithSerial(serial: number): Promise<string> {
    const deps = await testDeps();
    const now = Math.floor(Date.now() / 1000);
    return deps.signingKeys.sign({ serial, iat: now, exp: now + 3600, entries: [] }, { typ: "revocations+jwt" });
  }

  it("is public, cached by ETag, and the same bytes on every instance", async () => {
    const app = await testApp();
    const first = await request(app).get("/api/v1/revocations");
    expect(first.status).toBe(200);
    expect(first.headers["cache-control"]).toMatch(/^public, max-age=\d+/);
    expect((await request(app).get("/api/v1/revocations").set("If-None-Match", first.headers.etag)).status).toBe(304);
    const other = await otherInstanceApp();
    expect((await request(other).get("/api/v1/revocations")).body.list).toBe(first.body.list);
  });

  it("shows a revocation on another instance within 2 s, at once on the revoking one", async () => {
    const other = await otherInstanceApp({ config: { memoryCacheMs: 600_000 } });
    expect((await request(other).get("/api/v1/modules/download/acme.charts?version=2.0.0").set(bearer(user))).status).toBe(200);
    await revokeModule(await operatorDeps(), { moduleId: "acme.charts", version: "2.0.0", reason: "Bad build." });
    const deadline = Date.now() + 2_000;
    let status = 0;
    while (Date.now() < deadline && status !== 410) {
      status = (await request(other).get("/api/v1/modules/download/acme.charts?version=2.0.0").set(bearer(user))).status;
    }
    expect(status).toBe(410);
  });

  it("blocklisting a published package revokes it", async () => {
    const result = await addToBlocklist(await operatorDeps(), { sha256: sha256Hex(packages["1.1.0"]), reason: "Known dropper" });
    expect(result.revoked).toEqual(["acme.charts@1.1.0"]);
    expectProblem(await download("?version=1.1.0"), 410, "module_revoked");
    const list = await acceptRevocationList(await revocations(), await signingKeys(), null);
    expect(list.entries).toEqual([expect.objectContaining({ version: "1.1.0", reason: "Blocklisted: Known dropper" })]);
  });

  it("refuses bad operator input and unknown targets, changing nothing", async () => {
    await expect(revokeModule(await operatorDeps(), { moduleId: "acme.charts", reason: "" })).rejects.toMatchObject({ code: "invalid_request" });
    await expect(revokeModule(await operatorDeps(), { moduleId: "acme.nothing", reason: "x" })).rejects.toMatchObject({ code: "module_not_found" });
    await expect(revokeModule(await operatorDeps(), { moduleId: "acme.charts", version: "9.9.9", reason: "x" })).rejects.toMatchObject({ code: "version_not_found" });
    await expect(unrevokeModule(await operatorDeps(), { moduleId: "acme.charts", version: "1.0.0" })).rejects.toMatchObject({ code: "not_found" });
    expect((await acceptRevocationList(await revocations(), await signingKeys(), null)).serial).toBe(0);
  });

});
