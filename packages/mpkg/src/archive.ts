/**
 * Module packages (.mpkg: a ZIP with module.json at its root) as bytes, always laid out the same
 * way: `mpkg pack`, the demo data, the benchmark and the tests all write them here.
 */
import yazl from "yazl";

export interface PackageEntry {
  name: string;
  content: Buffer | string;
  compress?: boolean;
}

const FIXED_TIME = new Date("2026-01-01T00:00:00Z");

/** A ZIP of the entries; the same entries always give the same bytes. */
export function zip(entries: PackageEntry[]): Promise<Buffer> {
  const file = new yazl.ZipFile();
  for (const entry of entries) {
    file.addBuffer(Buffer.from(entry.content), entry.name, { compress: entry.compress ?? true, mtime: FIXED_TIME });
  }
  file.end();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    file.outputStream.on("data", (chunk: Buffer) => chunks.push(chunk));
    file.outputStream.on("end", () => resolve(Buffer.concat(chunks)));
    file.outputStream.on("error", reject);
  });
}

/** A package of a manifest and its files. */
export function buildPackage(manifest: Record<string, unknown>, files: PackageEntry[]): Promise<Buffer> {
  return zip([{ name: "module.json", content: JSON.stringify(manifest, null, 2) }, ...files]);
}
