import { ApiError } from "../core/errors";
import type { PackageEntryContent } from "../checks/service";
import { textOf } from "../checks/secrets";
import { checkIcon, ICON_RULES } from "./icon";
import { renderMarkdown } from "./markdown";

/**
 * What a module's page shows from its package (contract §16): the README and CHANGELOG, rendered
 * and sanitized at sign, and the icon, checked at sign. Collected entry by entry while the package
 * is read for its checks, so the package is inflated once.
 */

export const CONTENT_RULES = {
  defaultPaths: { readme: "README.md", changelog: "CHANGELOG.md", icon: "icon.png" },
  maxMarkdownBytes: 256 * 1024,
  /**
   * Rendered HTML is kept in one Firestore document each (at most 1 MiB): escaping can make HTML
   * several times larger than its Markdown, and a document that would not fit refuses the package.
   */
  maxHtmlBytes: 960 * 1024,
} as const;

export type ContentKind = keyof typeof CONTENT_RULES.defaultPaths;

/** Where the manifest says the files are, when not at their default paths. */
export type ContentPaths = Partial<Record<ContentKind, string>>;

export interface PackageContent {
  readmeHtml: string | null;
  changelogHtml: string | null;
  /** The PNG, checked. */
  icon: Buffer | null;
}

const invalid = (detail: string) => new ApiError("invalid_package", detail);

export function packageContent(manifestPaths: ContentPaths) {
  const named = Object.fromEntries(Object.entries(manifestPaths).filter(([, path]) => path !== undefined)) as ContentPaths;
  const paths: Record<ContentKind, string> = { ...CONTENT_RULES.defaultPaths, ...named };
  const found = new Map<ContentKind, Buffer>();
  return {
    /** The entries whose bytes `visit` needs. */
    paths: [...new Set(Object.values(paths))],

    visit(entry: PackageEntryContent): void {
      for (const kind of Object.keys(paths) as ContentKind[]) {
        if (paths[kind] !== entry.name) continue;
        const limit = kind === "icon" ? ICON_RULES.maxBytes : CONTENT_RULES.maxMarkdownBytes;
        if (!entry.bytes || entry.bytes.length > limit) throw invalid(`${entry.name} is larger than ${limit / 1024} KiB.`);
        found.set(kind, entry.bytes);
      }
    },

    /** The rendered documents and the checked icon; a file the manifest names must be there. */
    result(): PackageContent {
      for (const kind of Object.keys(named) as ContentKind[]) {
        if (!found.has(kind)) throw invalid(`module.json names ${kind} '${paths[kind]}', which the package does not contain.`);
      }
      const icon = found.get("icon");
      if (icon) checkIcon(icon, paths.icon);
      return {
        readmeHtml: rendered(found.get("readme"), paths.readme),
        changelogHtml: rendered(found.get("changelog"), paths.changelog),
        icon: icon ?? null,
      };
    },
  };
}

function rendered(bytes: Buffer | undefined, name: string): string | null {
  if (!bytes) return null;
  const source = textOf(bytes);
  if (source === null) throw invalid(`${name} is not UTF-8 text.`);
  const html = renderMarkdown(source);
  if (Buffer.byteLength(html) > CONTENT_RULES.maxHtmlBytes) {
    throw invalid(`${name} renders to more than ${CONTENT_RULES.maxHtmlBytes / 1024} KiB of HTML; shorten it.`);
  }
  return html;
}
