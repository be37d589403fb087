import MarkdownIt from "markdown-it";
import sanitizeHtml from "sanitize-html";

/**
 * A package's README and CHANGELOG as the marketplace shows them (contract §16): Markdown rendered
 * by markdown-it (raw HTML allowed, as READMEs use it), then sanitized by sanitize-html to an
 * allow-list. Nothing that runs or fetches survives: no scripts, event handlers, `style`, frames,
 * forms or `javascript:`/`data:` URLs; images become links (no tracking pixels, and no request
 * leaves the site when a page shows them); every link is `rel="noopener nofollow ugc"`.
 */

export const LINK_REL = "noopener nofollow ugc";

const markdown = new MarkdownIt({ html: true, linkify: true });

const SANITIZE: sanitizeHtml.IOptions = {
  allowedTags: [
    "h1", "h2", "h3", "h4", "h5", "h6", "p", "br", "hr", "blockquote", "pre", "code", "kbd", "samp",
    "em", "strong", "b", "i", "del", "s", "sub", "sup", "ul", "ol", "li", "dl", "dt", "dd", "a",
    "table", "thead", "tbody", "tr", "th", "td", "details", "summary",
  ],
  allowedAttributes: { a: ["href", "title", "rel"], code: ["class"], ol: ["start"], th: ["align"], td: ["align"] },
  allowedClasses: { code: [/^language-[\w-]{1,40}$/] },
  allowedSchemes: ["http", "https", "mailto"],
  allowedSchemesAppliedToAttributes: ["href"],
  allowProtocolRelative: false,
  disallowedTagsMode: "discard",
  // Deeper than this, tags are dropped and their text kept.
  nestingLimit: 50,
  transformTags: {
    a: (tagName, attribs) => ({ tagName, attribs: { ...attribs, rel: LINK_REL } }),
    img: (_tagName, attribs) => ({ tagName: "a", attribs: { href: attribs.src ?? "", rel: LINK_REL }, text: attribs.alt?.trim() || "image" }),
  },
  // A link whose URL was refused and that has no text is dropped; one with text keeps it (inert, without href).
  exclusiveFilter: (frame) => frame.tag === "a" && !frame.attribs.href && frame.text.trim() === "",
};

/** Sanitized HTML of a Markdown document. */
export function renderMarkdown(source: string): string {
  return sanitizeHtml(markdown.render(source), SANITIZE);
}
