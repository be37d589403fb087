import { createHash } from "node:crypto";
import type { Readable } from "node:stream";
import yauzl, { type Entry, type ZipFile } from "yauzl";
import { z } from "zod";
import { ENTITLEMENT_KEY, semverVersion } from "../core/documents";
import { ApiError } from "../core/errors";

/** The rules of a module package (contract §5), beyond the upload size limit. */
export const PACKAGE_RULES = {
  manifestName: "module.json",
  maxEntries: 10_000,
  maxUncompressedBytes: 200 * 1024 * 1024,
  maxCompressionRatio: 100,
  maxManifestBytes: 64 * 1024,
} as const;

/** Media types accepted for a package upload. */
export const PACKAGE_CONTENT_TYPES = ["application/octet-stream", "application/zip"];

export const PUBLISHER_ID = /^[a-z][a-z0-9-]{2,31}$/;
export const MODULE_ID = /^[a-z][a-z0-9-]{2,31}\.[a-z0-9][a-z0-9-]{0,63}$/;

/** `module.json`. Fields beyond these are allowed (for the desktop app) and ignored here. */
export const manifestSchema = z.object({
  id: z.string().regex(MODULE_ID, "id must be '<publisherId>.<name>' in lower-case letters, digits and '-'."),
  name: z.string().trim().min(1).max(100),
  version: semverVersion,
  summary: z.string().trim().min(1).max(300),
  description: z.string().max(20_000).optional(),
  category: z.string().regex(/^[a-z0-9-]{1,40}$/, "category must be 1-40 of [a-z0-9-].").optional(),
  entitlement: z.string().regex(ENTITLEMENT_KEY, "entitlement must be 1-64 of [a-z0-9_-], starting with a letter or digit.").optional(),
  minAppVersion: semverVersion.optional(),
});

export type Manifest = z.output<typeof manifestSchema>;

export interface InspectedPackage {
  manifest: Manifest;
  sha256: string;
  size: number;
}

const invalidPackage = (detail: string) => new ApiError(422, "invalid_package", detail);

/**
 * Checks that `bytes` are a module package: a ZIP whose entries stay inside it, within the entry
 * and size limits, whose declared sizes are true (every entry is inflated and counted, so a
 * lying header is caught), with a valid `module.json` at its root.
 */
export async function inspectPackage(bytes: Buffer): Promise<InspectedPackage> {
  const zip = await openZip(bytes);
  try {
    if (zip.entryCount > PACKAGE_RULES.maxEntries) {
      throw invalidPackage(`The package has ${zip.entryCount} entries; at most ${PACKAGE_RULES.maxEntries} are allowed.`);
    }
    const entries = await readEntries(zip);
    const uncompressed = entries.reduce((sum, entry) => sum + entry.uncompressedSize, 0);
    const compressed = entries.reduce((sum, entry) => sum + entry.compressedSize, 0);
    if (uncompressed > PACKAGE_RULES.maxUncompressedBytes) {
      throw invalidPackage(`The package unpacks to ${uncompressed} bytes; at most ${PACKAGE_RULES.maxUncompressedBytes} are allowed.`);
    }
    if (uncompressed > PACKAGE_RULES.maxCompressionRatio * Math.max(compressed, 1)) {
      throw invalidPackage(`The package's compression ratio exceeds ${PACKAGE_RULES.maxCompressionRatio}.`);
    }
    let manifestBytes: Buffer | undefined;
    for (const entry of entries) {
      const content = await readEntry(zip, entry, entry.fileName === PACKAGE_RULES.manifestName);
      if (content) manifestBytes = content;
    }
    if (!manifestBytes) throw invalidPackage(`The package has no ${PACKAGE_RULES.manifestName} at its root.`);
    return {
      manifest: parseManifest(manifestBytes),
      sha256: createHash("sha256").update(bytes).digest("hex"),
      size: bytes.length,
    };
  } finally {
    zip.close();
  }
}

function parseManifest(bytes: Buffer): Manifest {
  if (bytes.length > PACKAGE_RULES.maxManifestBytes) {
    throw invalidPackage(`${PACKAGE_RULES.manifestName} is larger than ${PACKAGE_RULES.maxManifestBytes} bytes.`);
  }
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString("utf8"));
  } catch {
    throw invalidPackage(`${PACKAGE_RULES.manifestName} is not valid JSON.`);
  }
  const result = manifestSchema.safeParse(json);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`);
    throw invalidPackage(`${PACKAGE_RULES.manifestName} is invalid: ${problems.join("; ")}`);
  }
  return result.data;
}

function openZip(bytes: Buffer): Promise<ZipFile> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(bytes, { lazyEntries: true, validateEntrySizes: true, decodeStrings: true }, (error, zip) => {
      if (error || !zip) reject(invalidPackage(`The package is not a ZIP archive (${error?.message ?? "unreadable"}).`));
      else resolve(zip);
    });
  });
}

/** The central directory; yauzl refuses absolute paths, '..' segments and backslashes here. */
function readEntries(zip: ZipFile): Promise<Entry[]> {
  return new Promise((resolve, reject) => {
    const entries: Entry[] = [];
    zip.on("entry", (entry: Entry) => {
      entries.push(entry);
      zip.readEntry();
    });
    zip.once("end", () => resolve(entries));
    zip.once("error", (error: Error) => reject(invalidPackage(`The package has an invalid entry: ${error.message}.`)));
    zip.readEntry();
  });
}

/** Inflates an entry, checking its size; returns its bytes when `keep`, else discards them. */
function readEntry(zip: ZipFile, entry: Entry, keep: boolean): Promise<Buffer | undefined> {
  if (entry.fileName.endsWith("/")) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    zip.openReadStream(entry, (error, stream?: Readable) => {
      if (error || !stream) return reject(invalidPackage(`Cannot read '${entry.fileName}': ${error?.message}.`));
      const chunks: Buffer[] = [];
      let kept = 0;
      stream.on("data", (chunk: Buffer) => {
        if (keep && kept <= PACKAGE_RULES.maxManifestBytes) {
          chunks.push(chunk);
          kept += chunk.length;
        }
      });
      stream.once("end", () => resolve(keep ? Buffer.concat(chunks) : undefined));
      stream.once("error", (streamError: Error) =>
        reject(invalidPackage(`Entry '${entry.fileName}' is corrupt: ${streamError.message}.`)),
      );
    });
  });
}
