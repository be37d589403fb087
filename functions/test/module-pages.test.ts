import request from "supertest";
import { modulePageSchema } from "../src/module-pages/schemas";
import { LINK_REL } from "../src/module-pages/markdown";
import type { PackageEntry } from "../../packages/mpkg/src/archive";
import { countDocuments } from "./support/fixtures";
import { HOSTILE_README, modulePackage, pngImage } from "./support/packages";
import { bearer, createDeveloper, createUser, expectProblem, publishModule, resetEmulators, storedObjects, testApp, type TestDeveloper } from "./support/harness";

/** Contract §16: what a package's README, CHANGELOG and icon become, through the API. */
describe("module pages", () => {
  let acme: TestDeveloper;
  const icon = pngImage(64, 64);

  const sign = async (developer: TestDeveloper, bytes: Buffer) =>
    request(await testApp()).post("/api/v1/developers/modules/sign").set(bearer(developer)).set("Content-Type", "application/octet-stream").send(bytes);

  beforeAll(async () => {
    await resetEmulators();
    acme = await createDeveloper("acme");
    await publishModule(acme, { id: "acme.plotter", name: "Plotter", summary: "Plots things.", version: "1.0.0", category: "data", maxAppVersion: "3.0.0" }, [
      { name: "README.md", content: HOSTILE_README },
      { name: "CHANGELOG.md", content: "# Changelog\n\n## 1.0.0\n\n- First release, see <https://example.com/notes>.\n" },
      { name: "icon.png", content: icon },
    ]);
  });

  it("GET /modules/:id gives details, versions and the sanitized README and CHANGELOG of the latest version", async () => {
    const response = await request(await testApp()).get("/api/v1/modules/acme.plotter");
    expect(response.status).toBe(200);
    expect(response.headers["cache-control"]).toMatch(/^public/);
    const page = modulePageSchema.parse(response.body);
    expect(page).toMatchObject({
      id: "acme.plotter",
      name: "Plotter",
      summary: "Plots things.",
      description: null,
      category: "data",
      publisherId: "acme",
      entitlement: null,
      latestVersion: "1.0.0",
      downloads: 0,
      versions: [{ version: "1.0.0", publishedAt: expect.any(String), minAppVersion: null, maxAppVersion: "3.0.0", yanked: false }],
    });
    expect(page.access).toBeUndefined();
    expect(page.iconUrl).toMatch(/\/api\/v1\/modules\/acme\.plotter\/icon\?v=1\.0\.0$/);
    expect(page.readmeHtml).toContain(`<a href="https://docs.example/guide" rel="${LINK_REL}">the docs</a>`);
    for (const markup of ["<script", "onerror=", "onclick=", 'href="javascript', "<iframe", "<style", "style=", "<form", "<svg"]) {
      expect(page.readmeHtml!.toLowerCase()).not.toContain(markup);
    }
    expect(page.changelogHtml).toContain(`<a href="https://example.com/notes" rel="${LINK_REL}">https://example.com/notes</a>`);
  });

  it("with a token, says whether the caller may use the module; the listing names the icon too", async () => {
    const user = await createUser();
    const response = await request(await testApp()).get("/api/v1/modules/acme.plotter").set(bearer(user));
    expect(response.status).toBe(200);
    expect(response.body.access).toEqual({ usable: true, activated: false });
    expect(response.headers["cache-control"]).toBe("private, no-store");
    const listing = await request(await testApp()).get("/api/v1/modules");
    expect(listing.body.items.find((item: { id: string }) => item.id === "acme.plotter").iconUrl).toBe(response.body.iconUrl);
  });

  it("GET /modules/:id/icon serves the PNG with public cache headers and a validator", async () => {
    const app = await testApp();
    const response = await request(app).get("/api/v1/modules/acme.plotter/icon?v=1.0.0").buffer(true).parse((res, done) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => done(null, Buffer.concat(chunks)));
    });
    expect(response.status).toBe(200);
    expect(response.headers["content-type"]).toBe("image/png");
    expect(response.headers["cache-control"]).toMatch(/^public, max-age=\d+/);
    expect(Buffer.compare(response.body as Buffer, icon)).toBe(0);
    const again = await request(app).get("/api/v1/modules/acme.plotter/icon").set("If-None-Match", response.headers.etag);
    expect(again.status).toBe(304);
    expectProblem(await request(app).get("/api/v1/modules/acme.plotter/icon?v=9.9.9"), 404, "version_not_found");
    expectProblem(await request(app).get("/api/v1/modules/acme.plotter/icon?v=not-a-version"), 400, "invalid_request");
  });

  it("answers 404 for a module not in the marketplace, 400 for what is no module id, 405 for paths of other routes", async () => {
    const app = await testApp();
    expect((await sign(acme, await modulePackage({ id: "acme.draft", version: "0.1.0" }, [{ name: "icon.png", content: icon }]))).status).toBe(201);
    expectProblem(await request(app).get("/api/v1/modules/acme.draft"), 404, "module_not_found");
    expectProblem(await request(app).get("/api/v1/modules/acme.draft/icon"), 404, "module_not_found");
    expectProblem(await request(app).get("/api/v1/modules/acme.nothing"), 404, "module_not_found");
    expectProblem(await request(app).get("/api/v1/modules/__proto__"), 400, "invalid_request");
    expectProblem(await request(app).get("/api/v1/modules/updates"), 405, "method_not_allowed");
    await publishModule(acme, { id: "acme.bare", version: "1.0.0" });
    const bare = await request(app).get("/api/v1/modules/acme.bare");
    expect(bare.body).toMatchObject({ iconUrl: null, readmeHtml: null, changelogHtml: null });
    expectProblem(await request(app).get("/api/v1/modules/acme.bare/icon"), 404, "module_not_found");
  });

  it("takes the files module.json names instead of the defaults", async () => {
    await publishModule(acme, { id: "acme.named", version: "1.0.0", readme: "docs/intro.md", changelog: "docs/history.md", icon: "assets/logo.png" }, [
      { name: "README.md", content: "# Not this one" },
      { name: "docs/intro.md", content: "# Intro" },
      { name: "docs/history.md", content: "## 1.0.0" },
      { name: "assets/logo.png", content: icon },
    ]);
    const page = (await request(await testApp()).get("/api/v1/modules/acme.named")).body;
    expect(page.readmeHtml).toBe("<h1>Intro</h1>\n");
    expect(page.changelogHtml).toBe("<h2>1.0.0</h2>\n");
    expect(page.iconUrl).not.toBeNull();
  });

  it("shows the README's images the package ships (here a PNG and a JPEG) from the API, and every other image as a link (§24)", async () => {
    const jpeg = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(60, 1)]);
    const readme = [
      "# Shots",
      "![The chart](docs/chart.png \"Chart\") ![again](./docs/chart.png)",
      '<img src="shot%201.jpg" alt="Shot" onerror="alert(1)">',
      "![tracker](https://tracker.example/pixel.gif) ![missing](docs/none.png) ![svg](logo.svg) ![out](../../etc/passwd)",
      '<img src="package-image:0" alt="forged">',
    ].join("\n\n");
    await publishModule(acme, { id: "acme.pictures", version: "1.0.0", readme: "README.md" }, [
      { name: "README.md", content: readme },
      { name: "docs/chart.png", content: icon },
      { name: "shot 1.jpg", content: jpeg },
      { name: "logo.svg", content: "<svg xmlns='http://www.w3.org/2000/svg' onload='alert(1)'/>" },
    ]);
    const app = await testApp();
    const html = (await request(app).get("/api/v1/modules/acme.pictures")).body.readmeHtml as string;
    const sources = [...html.matchAll(/<img src="([^"]+)"/g)].map((match) => match[1]);
    expect(sources.map((src) => new URL(src).pathname + new URL(src).search)).toEqual([
      "/api/v1/modules/acme.pictures/images/0?v=1.0.0",
      "/api/v1/modules/acme.pictures/images/0?v=1.0.0",
      "/api/v1/modules/acme.pictures/images/1?v=1.0.0",
    ]);
    expect(html).toContain('alt="The chart" title="Chart"');
    expect(html).not.toContain("onerror");
    for (const link of ["https://tracker.example/pixel.gif", "docs/none.png", "logo.svg"]) expect(html).toContain(`<a href="${link}" rel="${LINK_REL}">`);
    expect(html).not.toMatch(/src="package-image/);

    const binary = (path: string) =>
      request(app).get(path).buffer(true).parse((res, done) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => done(null, Buffer.concat(chunks)));
      });
    const png = await binary("/api/v1/modules/acme.pictures/images/0?v=1.0.0");
    expect([png.status, png.headers["content-type"], png.headers["x-content-type-options"]]).toEqual([200, "image/png", "nosniff"]);
    expect(Buffer.compare(png.body as Buffer, icon)).toBe(0);
    const shot = await binary("/api/v1/modules/acme.pictures/images/1");
    expect([shot.status, shot.headers["content-type"], Buffer.compare(shot.body as Buffer, jpeg)]).toEqual([200, "image/jpeg", 0]);
    expectProblem(await request(app).get("/api/v1/modules/acme.pictures/images/2"), 404, "module_not_found");
    expectProblem(await request(app).get("/api/v1/modules/acme.pictures/images/1?v=9.9.9"), 404, "version_not_found");
    expectProblem(await request(app).get("/api/v1/modules/acme.pictures/images/16"), 404, "module_not_found");
    for (const index of ["01", "-1", "x", "1e1"]) expectProblem(await request(app).get(`/api/v1/modules/acme.pictures/images/${index}`), 400, "invalid_request");

    const tooBig = await sign(acme, await modulePackage({ id: "acme.huge-shot", version: "1.0.0" }, [
      { name: "README.md", content: "![big](big.png)" },
      { name: "big.png", content: Buffer.concat([icon, Buffer.alloc(513 * 1024)]), compress: false },
    ]));
    expectProblem(tooBig, 422, "invalid_package");
    expect(tooBig.body.detail).toMatch(/big\.png, an image the README shows, is larger than 512 KiB/);
  });

  it("names the resources module.json links to (§24), and refuses addresses that are not http(s)", async () => {
    const links = { homepage: "https://acme.example/", repository: "https://git.example/acme/linked", issues: "https://git.example/acme/linked/issues", license: "Apache-2.0" };
    await publishModule(acme, { id: "acme.linked", version: "1.0.0", ...links });
    expect((await request(await testApp()).get("/api/v1/modules/acme.linked")).body.resources).toEqual(links);
    await publishModule(acme, { id: "acme.linked", version: "1.1.0", homepage: links.homepage });
    expect((await request(await testApp()).get("/api/v1/modules/acme.linked")).body.resources).toEqual({ homepage: links.homepage, repository: null, issues: null, license: null });
    for (const homepage of ["javascript:alert(1)", "ftp://acme.example/", "//acme.example", "https://localhost/", `https://acme.example/${"x".repeat(500)}`]) {
      const response = await sign(acme, await modulePackage({ id: "acme.linked", version: "1.2.0", homepage }));
      expectProblem(response, 422, "invalid_package");
      expect([homepage, response.body.detail]).toEqual([homepage, expect.stringMatching(/homepage/)]);
    }
  });

  it("refuses a package whose README, CHANGELOG or icon breaks the rules, and keeps nothing of it", async () => {
    const before = { objects: await storedObjects("modules/acme.refused/"), versions: await countDocuments("modules/acme.refused/versions") };
    const cases: [string, PackageEntry[], Record<string, unknown>, RegExp][] = [
      ["icon too wide", [{ name: "icon.png", content: pngImage(600, 10) }], {}, /600×10/],
      ["icon not a PNG", [{ name: "icon.png", content: "<svg onload=alert(1)>" }], {}, /not a PNG/],
      ["README not UTF-8", [{ name: "README.md", content: Buffer.from([0x23, 0x20, 0xff, 0xfe]) }], {}, /not UTF-8/],
      ["README too long", [{ name: "README.md", content: "a".repeat(257 * 1024), compress: false }], {}, /larger than 256 KiB/],
      ["README that renders too long", [{ name: "README.md", content: "&".repeat(250 * 1024), compress: false }], {}, /renders to more than/],
      ["a named file missing", [], { changelog: "CHANGES.md" }, /names changelog 'CHANGES.md'/],
      ["a path outside the root", [], { readme: "../README.md" }, /readme/],
    ];
    for (const [what, files, manifest, detail] of cases) {
      const response = await sign(acme, await modulePackage({ id: "acme.refused", version: "1.0.0", ...manifest }, files));
      expectProblem(response, 422, "invalid_package");
      expect([what, response.body.detail]).toEqual([what, expect.stringMatching(detail)]);
    }
    expect(await storedObjects("modules/acme.refused/")).toEqual(before.objects);
    expect(await countDocuments("modules/acme.refused/versions")).toBe(before.versions);
  });

  it("a version signed again before it is published has its new package's content only", async () => {
    expect((await sign(acme, await modulePackage({ id: "acme.resigned", version: "1.0.0" }, [{ name: "README.md", content: "# First" }, { name: "icon.png", content: icon }]))).status).toBe(201);
    await publishModule(acme, { id: "acme.resigned", version: "1.0.0" }, [{ name: "CHANGELOG.md", content: "# Second" }]);
    const page = (await request(await testApp()).get("/api/v1/modules/acme.resigned")).body;
    expect(page).toMatchObject({ readmeHtml: null, changelogHtml: "<h1>Second</h1>\n", iconUrl: null });
  });

  it("shows the latest version's content, and versions yanked as such", async () => {
    await publishModule(acme, { id: "acme.plotter", name: "Plotter", summary: "Plots things.", version: "2.0.0" }, [{ name: "README.md", content: "# Two" }]);
    const app = await testApp();
    const page = (await request(app).get("/api/v1/modules/acme.plotter")).body;
    expect(page).toMatchObject({ latestVersion: "2.0.0", readmeHtml: "<h1>Two</h1>\n", changelogHtml: null, iconUrl: null });
    expect(page.versions.map((entry: { version: string }) => entry.version)).toEqual(["2.0.0", "1.0.0"]);
    expect((await request(app).post("/api/v1/developers/modules/yank").set(bearer(acme)).send({ moduleId: "acme.plotter", version: "2.0.0" })).status).toBe(200);
    const yanked = (await request(app).get("/api/v1/modules/acme.plotter")).body;
    expect(yanked.latestVersion).toBe("1.0.0");
    expect(yanked.readmeHtml).toContain("Hostile");
    expect(yanked.versions).toEqual([expect.objectContaining({ version: "2.0.0", yanked: true }), expect.objectContaining({ version: "1.0.0", yanked: false })]);
    // The old version's icon is still there, under its own address.
    expect((await request(app).get("/api/v1/modules/acme.plotter/icon")).status).toBe(200);
  });
});
