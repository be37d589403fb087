import { posix } from "node:path";
import MarkdownIt from "markdown-it";
import sanitizeHtml from "sanitize-html";

/**
 * A package's README and CHANGELOG as the marketplace shows them (contract §16): Markdown rendered
 * by markdown-it (raw HTML allowed, as READMEs use it), then sanitized by sanitize-html to an
 * allow-list. Nothing that runs or fetches survives: no scripts, event handlers, `style`, frames,
 * forms or `javascript:`/`data:` URLs; images the package ships are kept (§24: served by the API
 * from the version's kept content) and every other image becomes a link (no tracking pixels, and
 * no request leaves the site when a page shows them); every link is `rel="noopener nofollow ugc"`.
 */

export const LINK_REL = "noopener nofollow ugc";

const markdown = new MarkdownIt({ html: true, linkify: true });

/**
 * Where a kept image's `src` points in stored HTML: `package-image:<n>`, the n-th kept image. Only
 * the sanitizer's own transform writes it (an author's `<img>` always passes through that
 * transform), and the page's reader turns it into the image's address (`imageSources`).
 */
const IMAGE_MARKER = "package-image:";

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

const asLink = (attribs: sanitizeHtml.Attributes) => ({ tagName: "a", attribs: { href: attribs.src ?? "", rel: LINK_REL }, text: attribs.alt?.trim() || "image" });

/**
 * Sanitized HTML of a Markdown document; `keptImage` gives the index of an image `src` the package
 * ships (and the page serves), or null to show it as a link.
 */
export function renderMarkdown(source: string, keptImage: (src: string) => number | null = () => null): string {
  return sanitizeHtml(markdown.render(source), {
    ...SANITIZE,
    allowedTags: [...SANITIZE.allowedTags as string[], "img"],
    allowedAttributes: { ...SANITIZE.allowedAttributes, img: ["src", "alt", "title"] },
    transformTags: {
      ...SANITIZE.transformTags,
      img: (_tagName, attribs) => {
        const index = attribs.src ? keptImage(attribs.src) : null;
        if (index === null) return asLink(attribs);
        return { tagName: "img", attribs: { src: `${IMAGE_MARKER}${index}`, alt: attribs.alt ?? "", ...(attribs.title ? { title: attribs.title } : {}) } };
      },
    },
  });
}

/** The `src` of every image a Markdown document shows, raw HTML's included, in document order. */
export function imageSources(source: string): string[] {
  const found: string[] = [];
  sanitizeHtml(markdown.render(source), {
    allowedTags: ["img"],
    allowedAttributes: { img: ["src"] },
    transformTags: {
      img: (tagName, attribs) => {
        if (attribs.src) found.push(attribs.src);
        return { tagName, attribs };
      },
    },
  });
  return found;
}

/**
 * The package path an image `src` of the document at `documentPath` names, or null for anything
 * but a relative path inside the package (a URL with a scheme, `//host`, `/…`, or one that climbs out).
 */
export function packagePathOf(src: string, documentPath: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(src) || src.startsWith("/") || src.startsWith("\\")) return null;
  let relative = src.split(/[?#]/)[0];
  try {
    relative = decodeURIComponent(relative);
  } catch {
    return null;
  }
  if (relative === "" || relative.includes("\\") || relative.includes("\0")) return null;
  const resolved = posix.normalize(posix.join(posix.dirname(documentPath), relative));
  return resolved === ".." || resolved.startsWith("../") || resolved.startsWith("/") ? null : resolved;
}

/** Stored HTML with its kept images' markers turned into their addresses. */
export function withImageAddresses(html: string, addressOf: (index: number) => string): string {
  return html.replace(new RegExp(`src="${IMAGE_MARKER}(\\d+)"`, "g"), (_match, index: string) => `src="${addressOf(Number(index))}"`);
}
