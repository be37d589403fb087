import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

const ROOT = path.join(__dirname, "..", "..");
const EXAMPLES = path.join(ROOT, "docs", "examples");

describe("the README's code examples", () => {
  // The examples are compiled and run by the tests (test/activations.test.ts …); the README shows them.
  it.each(readdirSync(EXAMPLES))("quotes docs/examples/%s exactly as the tests run it", (file) => {
    const readme = readFileSync(path.join(ROOT, "README.md"), "utf8");
    expect(readme).toContain(`\`\`\`ts\n${readFileSync(path.join(EXAMPLES, file), "utf8").trimEnd()}\n\`\`\``);
  });
});
