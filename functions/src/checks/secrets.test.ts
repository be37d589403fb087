import { ORDINARY_TEXT, SECRET_SAMPLES, secretOf } from "../../test/support/secret-samples";
import { privateKeySamples } from "../../test/support/private-keys";
import { excerptOf, findSecrets } from "./secrets";

describe("findSecrets", () => {
  it.each(Object.entries(SECRET_SAMPLES))("finds a %s with its line and a redacted excerpt", async (_kind, sample) => {
    const text = `first line\n\n${sample.text}\nlast line\n`;
    const findings = await findSecrets("src/config.txt", text);
    expect(findings.length).toBeGreaterThanOrEqual(1);
    const [finding] = findings;
    expect(finding).toMatchObject({ check: "secret", path: "src/config.txt", line: 3 });
    expect(finding.rule).toMatch(/\S/);
    expect(finding.excerpt.startsWith(sample.prefix) || sample.prefix.startsWith(finding.excerpt.slice(0, -1))).toBe(true);
    expect(JSON.stringify(findings)).not.toContain(secretOf(sample.text).slice(4));
  });

  it("passes ordinary words and code", async () => {
    expect(await findSecrets("README.md", ORDINARY_TEXT)).toEqual([]);
  });

  it("is not silenced by a secretlint-disable comment in the package", async () => {
    const text = `// secretlint-disable\n${SECRET_SAMPLES["GitHub token"].text}\n// secretlint-enable\n`;
    expect(await findSecrets("index.js", text)).toHaveLength(1);
  });
});

describe("excerptOf", () => {
  it("shows at most four characters, fewer of a short string", () => {
    expect(excerptOf("ghp_abcdefghijklmnop")).toBe("ghp_…");
    expect(excerptOf("abcdef")).toBe("abc…");
    expect(excerptOf("ab")).toBe("a…");
  });
});

describe("findSecrets on private keys", () => {
  const samples = privateKeySamples();

  it.each(samples.map((sample) => [sample.kind, sample] as const))("finds a %s as one finding on its first line", async (_kind, sample) => {
    const findings = await findSecrets("keys/key.txt", `# deploy\n${sample.text}\n`);
    expect(findings).toEqual([expect.objectContaining({ check: "secret", path: "keys/key.txt", line: 2 })]);
    expect(findings[0].excerpt.length).toBeLessThanOrEqual(5);
  });

  it("finds a key indented in YAML", async () => {
    const pem = samples.find((sample) => sample.kind === "ed25519 PKCS#8")!.text;
    const yaml = `signing:\n  key: |\n${pem.split("\n").map((line) => `    ${line}`).join("\n")}`;
    expect(await findSecrets("config.yaml", yaml)).toEqual([expect.objectContaining({ line: 3 })]);
  });

  it("passes the words of a guide about keys, and a public key", async () => {
    const guide = [
      "Your key file starts with -----BEGIN PRIVATE KEY----- and ends with -----END PRIVATE KEY-----.",
      "Never commit a PuTTY-User-Key-File-3: file; keep Private-Lines: out of the repo.",
      "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n-----END PUBLIC KEY-----",
    ].join("\n");
    expect(await findSecrets("GUIDE.md", guide)).toEqual([]);
  });

  it("stays linear on hostile near-misses a megabyte long", async () => {
    const started = process.hrtime.bigint();
    await findSecrets("a.txt", `-----BEGIN PRIVATE KEY-----\nA:${" ".repeat(1 << 20)}`);
    await findSecrets("b.txt", `PuTTY-User-Key-File-3: x${"\n ".repeat(1 << 19)}`);
    // Catastrophic backtracking would take hours; linear scanning takes well under a minute even on a loaded machine.
    expect(Number(process.hrtime.bigint() - started) / 1e9).toBeLessThan(60);
  });
});
