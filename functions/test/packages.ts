/** Real module packages for tests, well-formed and hostile. */
import { buildPackage, type PackageEntry } from "../../tools/mpkg";

export { zip } from "../../tools/mpkg";

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

/** Rewrites the uncompressed size that the central directory declares for one entry. */
export function declareUncompressedSize(archive: Buffer, entryName: string, size: number): Buffer {
  const patched = Buffer.from(archive);
  const signature = 0x02014b50;
  for (let at = patched.length - 22; at >= 0; at -= 1) {
    if (patched.readUInt32LE(at) !== signature) continue;
    const nameLength = patched.readUInt16LE(at + 28);
    if (patched.subarray(at + 46, at + 46 + nameLength).toString() === entryName) {
      patched.writeUInt32LE(size, at + 24);
      return patched;
    }
  }
  throw new Error(`No central directory entry '${entryName}'.`);
}
