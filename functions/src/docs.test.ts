import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import MarkdownIt from "markdown-it";

const ROOT = path.join(__dirname, "..", "..");
const EXAMPLES = path.join(ROOT, "docs", "examples");

/** The project's own prose: the README and every Markdown file under docs/. */
function markdownFiles(dir = path.join(ROOT, "docs")): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return markdownFiles(full);
    return entry.name.endsWith(".md") ? [full] : [];
  });
}
const DOCUMENTS = [path.join(ROOT, "README.md"), ...markdownFiles()];
const markdown = new MarkdownIt({ html: true });

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");

function headingsOf(file: string): Set<string> {
  const tokens = markdown.parse(readFileSync(file, "utf8"), {});
  return new Set(tokens.flatMap((token, index) => (token.type === "heading_open" ? [anchorOf(tokens[index + 1].content.replace(/`/g, ""))] : [])));
}

/** Every link and image target of a Markdown file, as markdown-it reads them (code blocks excluded). */
function linksOf(file: string): string[] {
  const targets: string[] = [];
  const visit = (tokens: ReturnType<typeof markdown.parse>) => {
    for (const token of tokens) {
      if (token.type === "link_open") targets.push(String(token.attrGet("href") ?? ""));
      if (token.type === "image") targets.push(String(token.attrGet("src") ?? ""));
      if (token.children) visit(token.children);
    }
  };
  visit(markdown.parse(readFileSync(file, "utf8"), {}));
  return targets;
}

describe("the docs' code examples", () => {
  // The examples are compiled and run by the tests (test/activations.test.ts …); the guides show them.
  const examples = readdirSync(EXAMPLES, { recursive: true, encoding: "utf8" }).filter((file) => statSync(path.join(EXAMPLES, file)).isFile());
  it.each(examples)("quotes docs/examples/%s exactly as the tests run it", (file) => {
    const language = file.endsWith(".mjs") ? "js" : "ts";
    const quoted = `\`\`\`${language}\n${readFileSync(path.join(EXAMPLES, file), "utf8").trimEnd()}\n\`\`\``;
    expect(DOCUMENTS.filter((document) => readFileSync(document, "utf8").includes(quoted)).map((document) => path.relative(ROOT, document))).not.toEqual([]);
  });
});

describe("the docs' links", () => {
  it("finds the README and the guides", () => {
    expect(DOCUMENTS.map((file) => path.relative(ROOT, file))).toEqual(expect.arrayContaining(["README.md", "docs/API.md", "docs/guides/publishers.md"]));
  });

  it.each(DOCUMENTS.map((file) => [path.relative(ROOT, file), file]))("every relative link of %s resolves, anchors included", (_name, file) => {
    const broken = linksOf(file)
      .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target))
      .filter((target) => {
        const [pathPart, anchor] = target.split("#");
        const destination = pathPart ? path.resolve(path.dirname(file), decodeURIComponent(pathPart)) : file;
        if (!existsSync(destination)) return true;
        if (anchor === undefined || anchor === "" || statSync(destination).isDirectory() || !destination.endsWith(".md")) return false;
        return !headingsOf(destination).has(anchor);
      });
    expect(broken).toEqual([]);
  });

  it("keeps the README a front page", () => {
    expect(readFileSync(path.join(ROOT, "README.md"), "utf8").split("\n").length).toBeLessThanOrEqual(250);
  });
});
