import { randomBytes } from "node:crypto";
import request from "supertest";
import { addToBlocklist, removeFromBlocklist } from "../src/checks/blocklist";
import { approveVersion, listQuarantined, rejectVersion } from "../src/publishing/review";
import { countDocuments, sha256Hex } from "./support/fixtures";
import { bearer, createDeveloper, expectProblem, operatorDeps, publishModule, resetEmulators, storedObjects, testApp, testDeps, type TestDeveloper } from "./support/harness";
import { modulePackage } from "./support/packages";
import { privateKeySamples } from "./support/private-keys";
import { ORDINARY_TEXT, SECRET_SAMPLES, secretOf } from "./support/secret-samples";

/** Contract §14: what a package may not carry, and names that wait for an operator. */
describe("package checks at sign", () => {
  let developer: TestDeveloper;
  beforeEach(async () => {
    await resetEmulators();
    developer = await createDeveloper("acme");
  });

  const sign = async (bytes: Buffer, who: TestDeveloper = developer) =>
    request(await testApp()).post("/api/v1/developers/modules/sign").set(bearer(who)).set("Content-Type", "application/octet-stream").send(bytes);
  const publish = async (moduleId: string, version: string, who: TestDeveloper = developer) =>
    request(await testApp()).post("/api/v1/developers/modules/publish").set(bearer(who)).send({ moduleId, version });

  const expectNothingStored = async () => {
    expect(await storedObjects("modules/")).toEqual([]);
    expect(await countDocuments("modules")).toBe(0);
  };

  describe("secrets", () => {
    const privateKeys = privateKeySamples();

    it.each(Object.entries(SECRET_SAMPLES))("refuses a %s in a text file with its file, line and a redacted excerpt; nothing is stored", async (_kind, sample) => {
      const bytes = await modulePackage({}, [{ name: "config/settings.txt", content: `# settings\nname = charts\n${sample.text}\n` }]);
      const response = await sign(bytes);
      expectProblem(response, 422, "package_rejected");
      expect(response.body.findings[0]).toMatchObject({ check: "secret", path: "config/settings.txt", line: 3 });
      expect(response.body.findings[0].rule).toEqual(expect.any(String));
      expect(response.body.findings[0].excerpt.length).toBeLessThanOrEqual(5);
      expect(JSON.stringify(response.body)).not.toContain(secretOf(sample.text).slice(4, 12));
      await expectNothingStored();
    });

    it.each(["ed25519 PKCS#8", "x448 encrypted PKCS#8", "ed25519 PKCS#8 in a JSON string", "ssh-keygen ed25519 OpenSSH", "gpg ed25519 secret key block", "puttygen ed25519"])(
      "refuses a %s private key with a finding on its path; nothing is stored",
      async (kind) => {
        const key = privateKeys.find((sample) => sample.kind === kind)!;
        const response = await sign(await modulePackage({}, [{ name: "deploy/key.txt", content: `# key\n${key.text}` }]));
        expectProblem(response, 422, "package_rejected");
        expect(response.body.findings).toEqual([expect.objectContaining({ check: "secret", path: "deploy/key.txt", line: 2 })]);
        await expectNothingStored();
      },
    );

    it("passes a clean package with ordinary words", async () => {
      const response = await sign(await modulePackage({}, [{ name: "README.md", content: ORDINARY_TEXT }]));
      expect(response.status).toBe(201);
      expect(response.body.review).toEqual({ state: "passed", findings: [] });
    });

    it("scans every text entry, not binary ones or entries over 1 MiB", async () => {
      const secret = SECRET_SAMPLES["GitHub token"].text;
      const binary = Buffer.concat([Buffer.from([0xff, 0xfe, 0x00]), Buffer.from(secret)]);
      // Random text (a run of one letter would trip the compression-ratio limit of §5).
      const large = `${randomBytes(800 * 1024).toString("hex").slice(0, 1024 * 1024)}\n${secret}\n`;
      const passed = await sign(await modulePackage({}, [{ name: "blob.bin", content: binary }, { name: "big.txt", content: large }]));
      expect(passed.status).toBe(201);
      const refused = await sign(await modulePackage({ version: "1.0.1" }, [{ name: "a/b/c/deep.js", content: `const ok = 1;\n${secret}` }]));
      expectProblem(refused, 422, "package_rejected");
      expect(refused.body.findings).toEqual([expect.objectContaining({ path: "a/b/c/deep.js", line: 2 })]);
    });
  });

  describe("blocklist", () => {
    it("refuses a package holding a blocklisted file until the hash is removed", async () => {
      const payload = Buffer.from("known malware payload\n");
      await addToBlocklist(await operatorDeps(), { sha256: sha256Hex(payload), reason: "Dropper seen in the wild" });
      const bytes = await modulePackage({}, [{ name: "lib/helper.dll", content: payload }]);
      const refused = await sign(bytes);
      expectProblem(refused, 422, "package_rejected");
      expect(refused.body.findings).toEqual([{ check: "blocklist", rule: "blocklist", path: "lib/helper.dll", sha256: sha256Hex(payload) }]);
      await expectNothingStored();

      await removeFromBlocklist(await operatorDeps(), { sha256: sha256Hex(payload) });
      expect((await sign(bytes)).status).toBe(201);
    });

    it("refuses a whole package by its hash", async () => {
      const bytes = await modulePackage();
      await addToBlocklist(await operatorDeps(), { sha256: sha256Hex(bytes), reason: "Known bad build" });
      const refused = await sign(bytes);
      expectProblem(refused, 422, "package_rejected");
      expect(refused.body.findings).toEqual([{ check: "blocklist", rule: "blocklist", path: null, sha256: sha256Hex(bytes) }]);
    });

    it("refuses bad operator input with a 400-class error and stores nothing", async () => {
      await expect(addToBlocklist(await operatorDeps(), { sha256: "not-a-hash", reason: "x" })).rejects.toMatchObject({ code: "invalid_request" });
      await expect(removeFromBlocklist(await operatorDeps(), { sha256: "a".repeat(64) })).rejects.toMatchObject({ code: "not_found" });
      expect(await countDocuments("blocklist")).toBe(0);
    });
  });

  describe("look-alike names", () => {
    let contoso: TestDeveloper;
    beforeEach(async () => {
      contoso = await createDeveloper("contoso");
      await publishModule(contoso, { id: "contoso.charts", name: "Charts", version: "1.0.0", summary: "The original charts." });
    });

    it.each([
      ["acme.chart", "Chart"],
      ["acme.c-h-a-r-t-s", "Something else"],
      ["acme.grafik", "Chаrts"], // Cyrillic а in the name
      ["acme.cahrts", "Cahrts"],
      ["acme.chartz", "Chartz"],
      ["acme.charts", "Charts"],
    ])("quarantines %s (%s): signed and stored, not publishable or listed", async (moduleId, name) => {
      const signed = await sign(await modulePackage({ id: moduleId, name }));
      expect(signed.status).toBe(201);
      expect(signed.body.review).toEqual({ state: "quarantined", findings: [{ check: "similar_name", similarTo: "contoso.charts" }] });
      expectProblem(await publish(moduleId, "1.0.0"), 409, "under_review");
      const listing = await request(await testApp()).get("/api/v1/modules");
      expect(listing.body.items.map((item: { id: string }) => item.id)).toEqual(["contoso.charts"]);
    });

    it("passes unrelated names and a publisher's own look-alikes", async () => {
      for (const [moduleId, name] of [["acme.graphs", "Graphs"], ["acme.notes", "Notes"], ["acme.charting-kit", "Charting Kit"]]) {
        const signed = await sign(await modulePackage({ id: moduleId, name }));
        expect(signed.body.review.state).toBe("passed");
      }
      const own = await sign(await modulePackage({ id: "contoso.chart", name: "Chart" }), contoso);
      expect(own.body.review).toEqual({ state: "passed", findings: [] });
      expect((await publish("contoso.chart", "1.0.0", contoso)).status).toBe(200);
    });

    it("approve lets the publisher publish; the review shows to them", async () => {
      await sign(await modulePackage({ id: "acme.chart", name: "Chart" }));
      expect(await listQuarantined(await testDeps())).toEqual([
        expect.objectContaining({ moduleId: "acme.chart", version: "1.0.0", findings: [{ check: "similar_name", similarTo: "contoso.charts" }] }),
      ]);
      await approveVersion(await operatorDeps(), { moduleId: "acme.chart", version: "1.0.0", note: "Different product, checked." });
      expect(await listQuarantined(await testDeps())).toEqual([]);
      expect((await publish("acme.chart", "1.0.0")).status).toBe(200);
      const mine = await request(await testApp()).get("/api/v1/developers/modules").set(bearer(developer));
      expect(mine.body.items[0].versions[0].review).toEqual({
        state: "approved",
        findings: [{ check: "similar_name", similarTo: "contoso.charts" }],
        note: "Different product, checked.",
      });
      await expect(approveVersion(await operatorDeps(), { moduleId: "acme.chart", version: "1.0.0" })).rejects.toMatchObject({ code: "not_under_review" });
    });

    it("reject deletes the package and shows the reason; publishing stays refused", async () => {
      const signed = await sign(await modulePackage({ id: "acme.chart", name: "Chart" }));
      await rejectVersion(await operatorDeps(), { moduleId: "acme.chart", version: "1.0.0", reason: "Impersonates contoso.charts." });
      expect(await storedObjects(`modules/acme.chart/`)).toEqual([]);
      const refused = await publish("acme.chart", "1.0.0");
      expectProblem(refused, 409, "under_review");
      expect(refused.body.detail).toContain("Impersonates contoso.charts.");
      const mine = await request(await testApp()).get("/api/v1/developers/modules").set(bearer(developer));
      expect(mine.body.items[0].versions[0]).toMatchObject({ sha256: signed.body.sha256, review: { state: "rejected", reason: "Impersonates contoso.charts." } });
    });
  });
});
