/** Real module packages for tests, well-formed and hostile. */
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
