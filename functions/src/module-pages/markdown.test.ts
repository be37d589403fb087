import fc from "fast-check";
import { parseDocument } from "htmlparser2";
import { type ChildNode, type Element, isTag } from "domhandler";
import { HOSTILE_README } from "../../test/support/packages";
import { LINK_REL, renderMarkdown } from "./markdown";

/** What rendered HTML may contain at all: the elements and, per element, the attributes. */
const ALLOWED: Record<string, string[]> = Object.fromEntries(
  [
    ...["h1", "h2", "h3", "h4", "h5", "h6", "p", "br", "hr", "blockquote", "pre", "kbd", "samp", "em", "strong", "b", "i", "del", "s"],
    ...["sub", "sup", "ul", "li", "dl", "dt", "dd", "table", "thead", "tbody", "tr", "details", "summary"],
  ]
    .map((tag) => [tag, [] as string[]])
    .concat([
      ["a", ["href", "title", "rel"]],
      ["code", ["class"]],
      ["ol", ["start"]],
      ["th", ["align"]],
      ["td", ["align"]],
    ]),
);

function elements(nodes: ChildNode[]): Element[] {
  return nodes.flatMap((node) => (isTag(node) ? [node, ...elements(node.children)] : []));
}

/** Every way rendered HTML could run or fetch something, as a list of what was found. */
function dangersIn(html: string): string[] {
  const found: string[] = [];
  for (const element of elements(parseDocument(html).children)) {
    const allowed = ALLOWED[element.name];
    if (!allowed) found.push(`<${element.name}>`);
    for (const [name, value] of Object.entries(element.attribs)) {
      if (!allowed?.includes(name)) found.push(`<${element.name} ${name}>`);
      if (name === "href" && !/^(https?:|mailto:|[^:]*$)/i.test(value.trim())) found.push(`href=${value}`);
      if (name === "href" && value.trim().startsWith("//")) found.push(`protocol-relative href=${value}`);
    }
    if (element.name === "a" && element.attribs.rel !== LINK_REL) found.push(`<a rel=${element.attribs.rel}>`);
  }
  return found;
}

describe("README rendering (contract §16)", () => {
  it("renders Markdown and the HTML READMEs use", () => {
    const html = renderMarkdown("# Title\n\nSome *text* with [a link](https://example.com).\n\n```ts\nconst x = 1;\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n<details><summary>More</summary>Hidden</details>\n");
    expect(html).toContain("<h1>Title</h1>");
    expect(html).toContain(`<a href="https://example.com" rel="${LINK_REL}">a link</a>`);
    expect(html).toContain('<pre><code class="language-ts">const x = 1;');
    expect(html).toContain("<table>");
    expect(html).toContain("<details><summary>More</summary>Hidden</details>");
  });

  it("leaves nothing of a hostile README that runs, styles, frames, submits or fetches", () => {
    const html = renderMarkdown(HOSTILE_README);
    expect(dangersIn(html)).toEqual([]);
    for (const markup of ["<script", "onerror=", "onclick=", "onload=", "ontoggle=", 'href="javascript', 'href="data', "<iframe", "<style", "style=", "<form", "<input", "<svg", "<object", "<embed", "<meta", "<base"]) {
      expect(html.toLowerCase()).not.toContain(markup.toLowerCase());
    }
    // Refused Markdown links stay as their inert text.
    expect(html).toContain("[markdown js](javascript:window.__pwned='md-link')");
    // What is safe stays: text, the safe link, the code (as text), and images as plain links.
    expect(html).toContain(`<a href="https://docs.example/guide" rel="${LINK_REL}">the docs</a>`);
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(html).toContain(`<a href="https://tracker.example/pixel.png" rel="${LINK_REL}">pixel</a>`);
    expect(html).toContain("styled block");
  });

  it("holds for any mix of hostile fragments and Markdown (property)", () => {
    const fragments = fc.constantFrom(
      "<script>x()</script>", "<img src=x onerror=x()>", "<a href='javascript:x()'>j</a>", "[m](javascript:x())", "<iframe src=//e>",
      "<style>*{}</style>", "<form><input></form>", "<p style='color:red' onmouseover=x()>p</p>", "<svg/onload=x()>", "<a href=\"data:text/html,x\">d</a>",
      "<a href='//evil.example'>p</a>", "<math><a xlink:href='javascript:x()'>m</a></math>", "<noscript><p title=\"</noscript><img src=x onerror=x()>\">",
      "<!-- <script> -->", "<![CDATA[<script>]]>", "`<script>`", "> quote\n", "\n\n", "# h\n", "- item\n", "**b**", "<", ">", "\"", "'", "&", "\u0000",
      "<a href='java\tscript:x()'>t</a>", "<a href='&#x6A;avascript:x()'>e</a>", "<details ontoggle=x() open>", "<table><tr><td style=x>c</td></tr></table>",
    );
    fc.assert(
      fc.property(fc.array(fc.oneof(fragments, fc.string()), { maxLength: 25 }), (parts) => {
        expect(dangersIn(renderMarkdown(parts.join("")))).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it("drops tags nested deeper than its limit but keeps their text", () => {
    const html = renderMarkdown(`${"<blockquote>".repeat(200)}deep${"</blockquote>".repeat(200)}`);
    expect(html).toContain("deep");
    expect((html.match(/<blockquote>/g) ?? []).length).toBeLessThanOrEqual(50);
  });
});
