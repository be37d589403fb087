import { ApiError } from "../core/errors";
import type { PackageEntryContent } from "../checks/service";
import { textOf } from "../checks/secrets";
import { checkIcon, ICON_RULES } from "./icon";
import { imageSources, packagePathOf, renderMarkdown } from "./markdown";

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
  /**
   * The README's images the package ships (§24), each kept in a Firestore document of its own and
   * written in the sign transaction (at most 10 MiB in all): at most this many, of these sizes.
   */
  images: { maxCount: 16, maxBytes: 512 * 1024, maxTotalBytes: 4 * 1024 * 1024 },
} as const;

/** The image formats a README may show, by their first bytes (never SVG: it can carry script). */
const IMAGE_TYPES: { type: string; matches: (bytes: Buffer) => boolean }[] = [
  { type: "image/png", matches: (bytes) => bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) },
  { type: "image/jpeg", matches: (bytes) => bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff },
  { type: "image/gif", matches: (bytes) => ["GIF87a", "GIF89a"].includes(bytes.subarray(0, 6).toString("latin1")) },
  { type: "image/webp", matches: (bytes) => bytes.subarray(0, 4).toString("latin1") === "RIFF" && bytes.subarray(8, 12).toString("latin1") === "WEBP" },
];

export interface PackageImage {
  type: string;
  bytes: Buffer;
}

export type ContentKind = keyof typeof CONTENT_RULES.defaultPaths;

/** Where the manifest says the files are, when not at their default paths. */
export type ContentPaths = Partial<Record<ContentKind, string>>;

export interface PackageContent {
  readmeHtml: string | null;
  changelogHtml: string | null;
  /** The PNG, checked. */
  icon: Buffer | null;
  /** The README's images the package ships, in the order its HTML numbers them. */
  images: PackageImage[];
}

const invalid = (detail: string) => new ApiError("invalid_package", detail);

/** Where the README is in a package whose manifest names these paths. */
export const readmePathOf = (manifestPaths: ContentPaths) => manifestPaths.readme ?? CONTENT_RULES.defaultPaths.readme;

/**
 * The content of a package whose manifest names these paths, collected entry by entry;
 * `readme`, when the package has one, is its source read beforehand, which names the images to keep.
 */
export function packageContent(manifestPaths: ContentPaths, readme: Buffer | null = null) {
  const named = Object.fromEntries(Object.entries(manifestPaths).filter(([, path]) => path !== undefined)) as ContentPaths;
  const paths: Record<ContentKind, string> = { ...CONTENT_RULES.defaultPaths, ...named };
  const found = new Map<ContentKind, Buffer>();
  const readmeSource = readme && textOf(readme);
  // At most a few more than may be kept: the rest are counted only if the package ships them.
  const imagePaths = new Set(
    (readmeSource ? imageSources(readmeSource) : [])
      .map((src) => packagePathOf(src, paths.readme))
      .filter((path): path is string => path !== null)
      .slice(0, 4 * CONTENT_RULES.images.maxCount),
  );
  const images = new Map<string, PackageImage>();
  return {
    /** The entries whose bytes `visit` needs. */
    paths: [...new Set([...Object.values(paths), ...imagePaths])],

    visit(entry: PackageEntryContent): void {
      if (imagePaths.has(entry.name) && entry.bytes) {
        const type = IMAGE_TYPES.find((candidate) => candidate.matches(entry.bytes!))?.type;
        if (type) {
          if (entry.bytes.length > CONTENT_RULES.images.maxBytes) throw invalid(`${entry.name}, an image the README shows, is larger than ${CONTENT_RULES.images.maxBytes / 1024} KiB.`);
          images.set(entry.name, { type, bytes: entry.bytes });
        }
      }
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
      const { maxCount, maxTotalBytes } = CONTENT_RULES.images;
      if (images.size > maxCount) throw invalid(`The README shows ${images.size} images of the package; at most ${maxCount} may be shown.`);
      if ([...images.values()].reduce((sum, image) => sum + image.bytes.length, 0) > maxTotalBytes) {
        throw invalid(`The images the README shows come to more than ${maxTotalBytes / 1024 / 1024} MiB.`);
      }
      const order = [...images.keys()];
      const keptImage = (src: string) => {
        const index = order.indexOf(packagePathOf(src, paths.readme) ?? "");
        return index === -1 ? null : index;
      };
      return {
        readmeHtml: rendered(found.get("readme"), paths.readme, keptImage),
        changelogHtml: rendered(found.get("changelog"), paths.changelog),
        icon: icon ?? null,
        images: order.map((path) => images.get(path)!),
      };
    },
  };
}

function rendered(bytes: Buffer | undefined, name: string, keptImage?: (src: string) => number | null): string | null {
  if (!bytes) return null;
  const source = textOf(bytes);
  if (source === null) throw invalid(`${name} is not UTF-8 text.`);
  const html = renderMarkdown(source, keptImage);
  if (Buffer.byteLength(html) > CONTENT_RULES.maxHtmlBytes) {
    throw invalid(`${name} renders to more than ${CONTENT_RULES.maxHtmlBytes / 1024} KiB of HTML; shorten it.`);
  }
  return html;
}
