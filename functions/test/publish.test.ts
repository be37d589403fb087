import request from "supertest";
import { developerModulesSchema, publishedSchema } from "../src/publishing/schemas";
import { modulePackage } from "./support/packages";
import { bearer, createDeveloper, expectProblem, resetEmulators, testApp, type TestDeveloper } from "./support/harness";

describe("publishing", () => {
  let acme: TestDeveloper;
  beforeEach(async () => {
    await resetEmulators();
    acme = await createDeveloper("acme");
  });

  const sign = async (developer: TestDeveloper, manifest: Record<string, unknown>) => {
    const response = await request(await testApp())
      .post("/api/v1/developers/modules/sign")
      .set(bearer(developer))
      .set("Content-Type", "application/octet-stream")
      .send(await modulePackage(manifest));
    expect(response.status).toBe(201);
    return response.body;
  };
  const publish = async (developer: TestDeveloper, body: object) =>
    request(await testApp()).post("/api/v1/developers/modules/publish").set(bearer(developer)).send(body);

  it("publishes a signed version with the manifest's listing, and the module appears in GET /modules", async () => {
    await sign(acme, { version: "1.0.0", category: "charts", entitlement: "pro", description: "Long text." });
    expect((await request(await testApp()).get("/api/v1/modules")).body.items).toEqual([]);
    const response = await publish(acme, { moduleId: "acme.charts", version: "1.0.0" });
    expect(response.status).toBe(200);
    expect(publishedSchema.parse(response.body)).toBeTruthy();
    expect(response.body.module).toMatchObject({
      id: "acme.charts",
      name: "Charts",
      summary: "Draw bar charts and pie charts.",
      description: "Long text.",
      category: "charts",
      entitlement: "pro",
      publisherId: "acme",
      latestVersion: "1.0.0",
      downloads: 0,
    });
    expect(response.body.version).toMatchObject({ version: "1.0.0", state: "published", publishedAt: expect.any(String) });
    const listing = await request(await testApp()).get("/api/v1/modules");
    expect(listing.body.items.map((item: { id: string; latestVersion: string }) => [item.id, item.latestVersion])).toEqual([["acme.charts", "1.0.0"]]);
  });

  it("takes listing fields from the newly published version, dropping ones its manifest no longer has", async () => {
    await sign(acme, { version: "1.0.0", category: "charts", name: "Charts" });
    await publish(acme, { moduleId: "acme.charts", version: "1.0.0" });
    await sign(acme, { version: "1.1.0", name: "Charts Pro" });
    const response = await publish(acme, { moduleId: "acme.charts", version: "1.1.0" });
    expect(response.body.module).toMatchObject({ name: "Charts Pro", category: null, latestVersion: "1.1.0" });
  });

  it("answers 404 version_not_found for a version never signed, module_not_found for a module never signed", async () => {
    await sign(acme, { version: "1.0.0" });
    expectProblem(await publish(acme, { moduleId: "acme.charts", version: "2.0.0" }), 404, "version_not_found");
    expectProblem(await publish(acme, { moduleId: "acme.nothing", version: "1.0.0" }), 404, "module_not_found");
  });

  it("answers 403 not_owner to another developer", async () => {
    await sign(acme, { version: "1.0.0" });
    const globex = await createDeveloper("globex");
    expectProblem(await publish(globex, { moduleId: "acme.charts", version: "1.0.0" }), 403, "not_owner");
  });

  it("answers 409 version_already_published, and 409 version_not_newer unless semver-greater than the latest", async () => {
    for (const version of ["1.9.0", "1.10.0", "1.2.0", "1.10.0-beta.1"]) await sign(acme, { version });
    expect((await publish(acme, { moduleId: "acme.charts", version: "1.9.0" })).status).toBe(200);
    expect((await publish(acme, { moduleId: "acme.charts", version: "1.10.0" })).status).toBe(200);
    expectProblem(await publish(acme, { moduleId: "acme.charts", version: "1.10.0" }), 409, "version_already_published");
    expectProblem(await publish(acme, { moduleId: "acme.charts", version: "1.2.0" }), 409, "version_not_newer");
    expectProblem(await publish(acme, { moduleId: "acme.charts", version: "1.10.0-beta.1" }), 409, "version_not_newer");
  });

  it("lets exactly one of concurrent publishes of a version succeed", async () => {
    await sign(acme, { version: "1.0.0" });
    const app = await testApp();
    const responses = await Promise.all(
      Array.from({ length: 10 }, () =>
        request(app).post("/api/v1/developers/modules/publish").set(bearer(acme)).send({ moduleId: "acme.charts", version: "1.0.0" }),
      ),
    );
    const statuses = responses.map((response) => response.status).sort();
    expect(statuses).toEqual([200, ...Array(9).fill(409)]);
    responses.filter((r) => r.status === 409).forEach((r) => expect(r.body.code).toBe("version_already_published"));
  });

  it("rejects a bad body with 400", async () => {
    expectProblem(await publish(acme, { moduleId: "acme.charts" }), 400, "invalid_request");
    expectProblem(await publish(acme, { moduleId: "Not An Id", version: "1.0.0" }), 400, "invalid_request");
    expectProblem(await publish(acme, { moduleId: "acme.charts", version: "1.0.0", force: true }), 400, "invalid_request");
  });

  it("GET /developers/modules lists only the caller's modules, with every version and its state", async () => {
    await sign(acme, { version: "1.0.0" });
    await publish(acme, { moduleId: "acme.charts", version: "1.0.0" });
    await sign(acme, { version: "1.1.0" });
    await sign(acme, { id: "acme.maps", name: "Maps", version: "0.1.0" });
    const globex = await createDeveloper("globex");
    await sign(globex, { id: "globex.secret", version: "1.0.0" });

    const response = await request(await testApp()).get("/api/v1/developers/modules").set(bearer(acme));
    expect(response.status).toBe(200);
    expect(developerModulesSchema.parse(response.body)).toBeTruthy();
    expect(response.body.items.map((item: { id: string }) => item.id)).toEqual(["acme.charts", "acme.maps"]);
    const charts = response.body.items[0];
    expect(charts).toMatchObject({ name: "Charts", latestVersion: "1.0.0", downloads: 0 });
    expect(charts.versions.map((v: { version: string; state: string }) => [v.version, v.state])).toEqual([
      ["1.1.0", "signed"],
      ["1.0.0", "published"],
    ]);
    expect(charts.versions[1]).toEqual({
      version: "1.0.0",
      state: "published",
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      size: expect.any(Number),
      signedAt: expect.any(String),
      publishedAt: expect.any(String),
      yankedAt: null,
      yankReason: null,
      review: { state: "passed", findings: [] },
      revocation: null,
      provenance: null,
      authorKeyId: null,
    });
    expect(charts.policy).toEqual({ requireTrustedPublishing: false, requireAuthorSignature: false });
    expect(response.body.items[1]).toMatchObject({ id: "acme.maps", latestVersion: null });
  });
});
