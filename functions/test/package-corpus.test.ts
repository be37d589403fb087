import request from "supertest";
import { countDocuments, sha256Hex } from "./support/fixtures";
import { lyingZip, type RawArchive, type RawEntry } from "./support/lying-zip";
import { manifest } from "./support/packages";
import { bearer, createDeveloper, expectProblem, resetEmulators, storedObjects, testApp, testBucket, type TestDeveloper } from "./support/harness";

/**
 * "One reading only": archives that some ZIP reader (Python's zipfile, unzip, Java's
 * ZipInputStream, a streaming reader) would read differently from the service are refused, each
 * by the rule that must catch it, and nothing of them is stored.
 */
const manifestEntry = (overrides: Record<string, unknown> = {}): RawEntry => ({ name: "module.json", content: JSON.stringify(manifest(overrides)) });
const code: RawEntry = { name: "dist/index.js", content: "export const activate = () => 1;\n".repeat(20) };
const UNIX = 3 << 8;

const cases: [string, RawEntry[], RawArchive, RegExp][] = [
  ["an end record whose entry count hides a central entry", [manifestEntry(), code, { name: "hidden.js", content: "x" }], { endRecordCount: 2 }, /end record counts 2 entries; the central directory holds 3/],
  ["a local header whose name differs from its central entry", [manifestEntry(), { ...code, name: "dist/index.js", localName: "../../ndex.js" }], {}, /another name in its local header/],
  ["a local record that no central entry indexes", [manifestEntry(), { name: "../evil.js", content: "x", inCentral: false }, code], {}, /bytes no entry accounts for/],
  ["bytes between entries", [{ ...manifestEntry(), trailingGap: Buffer.from("hidden") }, code], {}, /bytes no entry accounts for/],
  ["a prepended stub", [manifestEntry(), code], { prepend: Buffer.alloc(4096, 0x4d) }, /bytes before its first entry/],
  ["two module.json entries", [manifestEntry(), manifestEntry({ id: "other.charts" })], {}, /name the same file/],
  ["./module.json beside module.json", [manifestEntry(), { ...manifestEntry({ id: "other.charts" }), name: "./module.json" }], {}, /'\.' segment/],
  ["names equal but for case", [manifestEntry(), { name: "README.md", content: "a" }, { name: "readme.md", content: "b" }], {}, /name the same file/],
  ["names equal after Unicode NFC", [manifestEntry(), { name: "caf\u00e9.txt", content: "a" }, { name: "cafe\u0301.txt", content: "b" }], {}, /name the same file/],
  ["a symbolic link to /etc/passwd", [manifestEntry(), { name: "passwd", content: "/etc/passwd", method: 0, madeBy: UNIX | 20, externalAttributes: (0o120777 << 16) >>> 0 }], {}, /not a regular file/],
  ["a symbolic link climbing out", [manifestEntry(), { name: "up", content: "../../..", method: 0, madeBy: UNIX | 20, externalAttributes: (0o120777 << 16) >>> 0 }], {}, /not a regular file/],
  ["a device entry", [manifestEntry(), { name: "dev", content: "", method: 0, madeBy: UNIX | 20, externalAttributes: (0o020644 << 16) >>> 0 }], {}, /not a regular file/],
  ["a name with a NUL", [manifestEntry(), { name: "dist/a\u0000.js", content: "x" }], {}, /control character/],
  ["a name with a backslash", [manifestEntry(), { name: "..\\..\\evil.js", content: "x" }], {}, /backslash/],
  ["a name with a drive letter", [manifestEntry(), { name: "C:/evil.js", content: "x" }], {}, /drive letter/],
  ["a name with a '..' segment", [manifestEntry(), { name: "dist/../../evil.js", content: "x" }], {}, /'\.\.' segment/],
  ["an absolute name", [manifestEntry(), { name: "/etc/cron.d/evil", content: "x" }], {}, /is absolute/],
  ["a non-ASCII name without the UTF-8 flag", [manifestEntry(), { name: Buffer.from([0x63, 0x61, 0x66, 0x82]), content: "x", flags: 0 }], {}, /without the UTF-8 flag/],
  ["a second name in a Unicode path extra field", [manifestEntry(), { name: "a.txt", content: "x", extra: Buffer.from([0x75, 0x70, 5, 0, 1, 0, 0, 0, 0]) }], {}, /second \(Unicode path\) name/],
  ["an encrypted entry", [manifestEntry(), { ...code, flags: 0x0001 }], {}, /is encrypted/],
  ["local flags that differ from the central entry", [manifestEntry(), { ...code, localFlags: 0x0002 }], {}, /other flags, version or method/],
  ["a wrong CRC-32", [manifestEntry(), { ...code, crc: 0x12345678 }], {}, /fails its CRC-32 check/],
  ["a data descriptor that disagrees", [manifestEntry(), { ...code, dataDescriptor: true, descriptorCrc: 1 }], {}, /data descriptor/],
  ["an end record comment hiding another end record", [manifestEntry(), code], { comment: Buffer.from([0x50, 0x4b, 0x05, 0x06, 0, 0]) }, /another end record/],
  ["a semver build suffix", [manifestEntry({ version: "1.0.0+build.7" }), code], {}, /must not carry build metadata/],
];

describe("one reading of every package", () => {
  let developer: TestDeveloper;
  beforeEach(async () => {
    await resetEmulators();
    developer = await createDeveloper("acme");
  });

  const sign = async (bytes: Buffer) =>
    request(await testApp()).post("/api/v1/developers/modules/sign").set(bearer(developer)).set("Content-Type", "application/octet-stream").send(bytes);

  it("accepts what the lying writer writes when it does not lie: stored and deflated entries, data descriptors", async () => {
    const bytes = lyingZip([manifestEntry(), code, { name: "assets/", content: "", method: 0 }, { name: "assets/logo.txt", content: "logo", method: 0, dataDescriptor: true }, { name: "caf\u00e9.txt", content: "ok" }]);
    const response = await sign(bytes);
    expect(response.status).toBe(201);
    expect(response.body).toEqual(expect.objectContaining({ moduleId: "acme.charts", version: "1.0.0", sha256: sha256Hex(bytes), size: bytes.length, state: "signed" }));
    const stored = await storedObjects("modules/");
    expect(stored).toEqual([`modules/acme.charts/1.0.0/${sha256Hex(bytes)}.mpkg`]);
    const [object] = await (await testBucket()).file(stored[0]).download();
    expect(object.equals(bytes)).toBe(true);
  });

  it.each(cases)("refuses %s with 422 invalid_package, storing nothing", async (_name, entries, archive, reason) => {
    const response = await sign(lyingZip(entries, archive));
    expectProblem(response, 422, "invalid_package");
    expect(response.body.detail).toMatch(reason);
    expect(await storedObjects("modules/")).toEqual([]);
    expect(await countDocuments("modules")).toBe(0);
  });
});
