import { ORDINARY_TEXT, SECRET_SAMPLES, secretOf } from "../../test/support/secret-samples";
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
