import { createHash, randomBytes } from "node:crypto";
import { compactVerify, createLocalJWKSet } from "jose";
import request from "supertest";
import { signedVersionSchema } from "../src/publishing/schemas";
import { countDocuments, sha256Hex } from "./support/fixtures";
import { declareUncompressedSize, modulePackage, renameEntry, zip } from "./support/packages";
import { bearer, createDeveloper, createUser, expectProblem, resetEmulators, storedObjects, testApp, testDeps, type TestDeveloper } from "./support/harness";


describe("POST /developers/modules/sign", () => {
  let developer: TestDeveloper;
  beforeEach(async () => {
    await resetEmulators();
    developer = await createDeveloper("acme");
  });

  const sign = async (bytes: Buffer, options: { contentType?: string; token?: string; maxPackageBytes?: number } = {}) =>
    request(await testApp(options.maxPackageBytes ? { config: { maxPackageBytes: options.maxPackageBytes } } : {}))
      .post("/api/v1/developers/modules/sign")
      .set("Authorization", `Bearer ${options.token ?? developer.idToken}`)
      .set("Content-Type", options.contentType ?? "application/octet-stream")
      .send(bytes);

  /** Asserts that a refused upload left nothing behind. */
  const expectNothingStored = async () => {
    expect(await storedObjects("modules/")).toEqual([]);
    expect(await countDocuments("modules")).toBe(0);
  };

  it("validates, stores and signs a package: 201 with a JWS that the published keys verify", async () => {
    const bytes = await modulePackage();
    const response = await sign(bytes);
    expect(response.status).toBe(201);
    expect(signedVersionSchema.parse(response.body)).toBeTruthy();
    expect(response.body).toMatchObject({ moduleId: "acme.charts", version: "1.0.0", sha256: sha256Hex(bytes), size: bytes.length, state: "signed" });

    const keys = await request(await testApp()).get("/api/v1/signing-keys");
    const { payload, protectedHeader } = await compactVerify(response.body.signature, createLocalJWKSet(keys.body));
    expect(protectedHeader).toEqual({ alg: "EdDSA", kid: response.body.keyId });
    expect(JSON.parse(Buffer.from(payload).toString())).toEqual({
      moduleId: "acme.charts",
      version: "1.0.0",
      sha256: sha256Hex(bytes),
      size: bytes.length,
      publisherId: "acme",
      iat: Math.floor(Date.parse(response.body.signedAt) / 1000),
    });
    const objects = await storedObjects("modules/acme.charts/1.0.0/");
    expect(objects).toEqual([`modules/acme.charts/1.0.0/${sha256Hex(bytes)}.mpkg`]);
  });

  it("accepts application/zip too, and rejects other media types with 415", async () => {
    expect((await sign(await modulePackage(), { contentType: "application/zip" })).status).toBe(201);
    expectProblem(await sign(await modulePackage({ version: "1.0.1" }), { contentType: "application/json" }), 415, "unsupported_media_type");
  });

  it.each([
    ["not a ZIP", async () => Buffer.from("this is not a zip archive at all"), /Not a ZIP archive/],
    ["an empty body", async () => Buffer.alloc(0), /Not a ZIP archive/],
    ["no module.json", async () => zip([{ name: "dist/index.js", content: "x" }]), /no module.json/],
    ["module.json in a folder", async () => zip([{ name: "sub/module.json", content: JSON.stringify({ id: "acme.charts" }) }]), /no module.json/],
    ["module.json that is not JSON", async () => zip([{ name: "module.json", content: "{ id: " }]), /not valid JSON/],
    ["a version that is not semver", async () => modulePackage({ version: "1.0" }), /version: .*semver/],
    ["a v-prefixed version", async () => modulePackage({ version: "v1.0.0" }), /version: .*semver/],
    ["an id outside [a-z0-9-]", async () => modulePackage({ id: "acme.Charts_2" }), /id: /],
    ["a missing summary", async () => modulePackage({ summary: undefined }), /summary: /],
    ["an entry climbing out with ..", async () => renameEntry(await modulePackage({}, [{ name: "zz/escape.txt", content: "x" }]), "zz/escape.txt", "../escape.txt"), /has a '\.\.' segment/],
    ["an absolute entry path", async () => renameEntry(await modulePackage({}, [{ name: "Aetc/evil", content: "x" }]), "Aetc/evil", "/etc/evil"), /is absolute/],
    ["a zip bomb (compression ratio over 100)", async () => modulePackage({}, [{ name: "zeros.bin", content: Buffer.alloc(20 * 1024 * 1024) }]), /compression ratio/],
    ["entries declaring more than 200 MiB", async () => declareUncompressedSize(await modulePackage({}, [{ name: "big.bin", content: randomBytes(3 * 1024 * 1024) }]), "big.bin", 201 * 1024 * 1024), /unpacks to \d+ bytes/],
    ["an entry larger than it declares", async () => declareUncompressedSize(await modulePackage({}, [{ name: "liar.txt", content: "0123456789".repeat(10) }]), "liar.txt", 10), /more than its declared 10 bytes/],
    ["more than 10,000 entries", async () => zip([{ name: "module.json", content: JSON.stringify({ id: "acme.charts", name: "C", version: "1.0.0", summary: "s" }) }, ...Array.from({ length: 10_001 }, (_, i) => ({ name: `f/${i}`, content: "", compress: false }))]), /10002 entries/],
  ])("refuses %s with 422 invalid_package and stores nothing", async (_case, build, reason) => {
    const response = await sign(await build());
    expectProblem(response, 422, "invalid_package");
    expect(response.body.detail).toMatch(reason);
    await expectNothingStored();
  });

  it("refuses a package over the upload limit with 413 and stores nothing", async () => {
    const bytes = await modulePackage({}, [{ name: "random.bin", content: createHash("sha512").update("x").digest().toString("hex").repeat(2000), compress: false }]);
    expectProblem(await sign(bytes, { maxPackageBytes: bytes.length - 1 }), 413, "payload_too_large");
    await expectNothingStored();
    expect((await sign(bytes, { maxPackageBytes: bytes.length })).status).toBe(201);
  });

  it("answers 403 namespace_mismatch for another publisher's id, storing nothing", async () => {
    expectProblem(await sign(await modulePackage({ id: "globex.charts" })), 403, "namespace_mismatch");
    expectProblem(await sign(await modulePackage({ id: "acmecorp.charts" })), 403, "namespace_mismatch");
    await expectNothingStored();
  });

  it("answers 403 not_a_developer for a user without a developer account", async () => {
    const user = await createUser();
    expectProblem(await sign(await modulePackage(), { token: user.idToken }), 403, "not_a_developer");
  });

  it("replaces a version that is only signed, deleting the replaced package", async () => {
    const first = await modulePackage({ summary: "First build." });
    const second = await modulePackage({ summary: "Second build." });
    expect((await sign(first)).status).toBe(201);
    const response = await sign(second);
    expect(response.status).toBe(201);
    expect(response.body.sha256).toBe(sha256Hex(second));
    expect(await storedObjects("modules/acme.charts/")).toEqual([`modules/acme.charts/1.0.0/${sha256Hex(second)}.mpkg`]);
    const { db } = await testDeps();
    const version = await db.doc("modules/acme.charts/versions/1.0.0").get();
    expect(version.get("sha256")).toBe(sha256Hex(second));
    expect(version.get("listing.summary")).toBe("Second build.");
  });

  it("refuses to re-sign a published version with 409, keeping the published package", async () => {
    const bytes = await modulePackage();
    await sign(bytes);
    const app = await testApp();
    expect((await request(app).post("/api/v1/developers/modules/publish").set(bearer(developer)).send({ moduleId: "acme.charts", version: "1.0.0" })).status).toBe(200);
    expectProblem(await sign(await modulePackage({ summary: "Changed." })), 409, "version_already_published");
    expect(await storedObjects("modules/acme.charts/")).toEqual([`modules/acme.charts/1.0.0/${sha256Hex(bytes)}.mpkg`]);
  });

  it("queues package uploads beyond MAX_CONCURRENT_SIGNS instead of refusing them", async () => {
    const unhandled: unknown[] = [];
    const logger = { info() {}, warn() {}, error: (_message: string, fields?: Record<string, unknown>) => unhandled.push(fields) };
    const app = await testApp({ config: { maxConcurrentSigns: 2 }, logger });
    const responses = await Promise.all(
      ["1.0.0", "1.0.1", "1.0.2", "1.0.3", "1.0.4", "1.0.5"].map(async (version) =>
        request(app).post("/api/v1/developers/modules/sign").set(bearer(developer)).set("Content-Type", "application/octet-stream")
          .send(await modulePackage({ version }, [{ name: "blob.bin", content: randomBytes(512 * 1024) }])),
      ),
    );
    expect(unhandled).toEqual([]);
    expect(responses.map((response) => response.status)).toEqual(Array(6).fill(201));
  });
});
