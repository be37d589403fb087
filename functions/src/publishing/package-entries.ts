import { createHash } from "node:crypto";
import type { PackageEntryContent } from "../checks/service";
import { ApiError } from "../core/errors";
import { readZipDirectory, verifyEntry, ZipFormatError } from "../core/zip";

/*
 * The entries of a module package, read and checked: apart from the manifest (package.ts), so that
 * the examination worker (examination-worker.ts) loads no more than it needs.
 */

/** The rules of a module package (contract §5), beyond the upload size limit. */
export const PACKAGE_RULES = {
  manifestName: "module.json",
  maxEntries: 10_000,
  maxUncompressedBytes: 200 * 1024 * 1024,
  maxCompressionRatio: 100,
  maxManifestBytes: 64 * 1024,
} as const;

export const invalidPackage = (detail: string) => new ApiError("invalid_package", detail);

export interface VerifyOptions {
  /** Called with every entry once it is verified, in archive order. */
  visit?: (entry: PackageEntryContent) => Promise<void> | void;
  /** Entries up to this size reach `visit` with their bytes. */
  keepBytesUpTo?: number;
}

/**
 * Inflates and checks every entry of a package (its size, CRC-32 and the end of its deflate
 * stream) and, with `visit`, hands each on with its SHA-256 and, when small, its bytes. Entries
 * are inflated one at a time, so memory holds one small entry at most beside the package.
 */
export function verifyEntries(bytes: Buffer, options: VerifyOptions = {}): Promise<void> {
  return zipErrorsAsInvalidPackage(async () => {
    for (const entry of readZipDirectory(bytes, PACKAGE_RULES)) {
      if (!options.visit) {
        await verifyEntry(bytes, entry);
        continue;
      }
      const hash = createHash("sha256");
      const keep = entry.uncompressedSize <= (options.keepBytesUpTo ?? 0);
      const chunks: Buffer[] = [];
      await verifyEntry(bytes, entry, (chunk) => {
        hash.update(chunk);
        if (keep) chunks.push(chunk);
      });
      await options.visit({ name: entry.name, sha256: hash.digest("hex"), bytes: keep ? Buffer.concat(chunks) : null });
    }
  });
}

export async function zipErrorsAsInvalidPackage<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof ZipFormatError) throw invalidPackage(error.message);
    throw error;
  }
}

