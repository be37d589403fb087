import { randomBytes } from "node:crypto";
import { buildPackage } from "../../../packages/mpkg/src/archive";
import { lyingZip } from "../../test/support/lying-zip";
import { inspectPackage } from "./package";

const manifest = { id: "acme.charts", name: "Charts", version: "1.2.3", summary: "Bar charts." };

describe("package inspection", () => {
  it("reads the manifest of a valid package, with the package's hash and size", async () => {
    const bytes = await buildPackage(manifest, [{ name: "dist/index.js", content: "export {};" }]);
    const inspected = await inspectPackage(bytes);
    expect(inspected.manifest).toEqual(manifest);
    expect(inspected.size).toBe(bytes.length);
    expect(inspected.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it.each([
    ["no module.json", lyingZip([{ name: "a.txt", content: "x" }]), /no module.json/],
    ["a manifest that is not JSON", lyingZip([{ name: "module.json", content: "{" }]), /not valid JSON/],
    ["a build suffix", lyingZip([{ name: "module.json", content: JSON.stringify({ ...manifest, version: "1.2.3+7" }) }]), /build metadata/],
    ["a manifest over 64 KiB", lyingZip([{ name: "module.json", content: JSON.stringify({ ...manifest, description: randomBytes(52_000).toString("base64") }) }]), /larger than/],
    ["a hidden second entry", lyingZip([{ name: "module.json", content: JSON.stringify(manifest) }, { name: "b", content: "x" }], { endRecordCount: 1 }), /end record counts 1/],
  ])("refuses %s as invalid_package", async (_name, bytes, reason) => {
    await expect(inspectPackage(bytes)).rejects.toMatchObject({ code: "invalid_package", detail: expect.stringMatching(reason) });
  });
});
