import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";

/** The data folder of the local stack, in the layout of `firebase emulators:export` (the official suite can `--import` it). */

/** Names inside a data folder, as `firebase emulators:export` writes them. */
export const EXPORT = {
  metadata: "firebase-export-metadata.json",
  firestore: "firestore_export",
  firestoreMetadata: "firestore_export/firestore_export.overall_export_metadata",
  auth: "auth_export",
  storage: "storage_export",
} as const;


/**
 * Exports into a fresh folder beside `dataDir`, then swaps it in, so a failed export never leaves
 * half a data folder. What an emulator could not export (it died) is kept from the previous export.
 */
export async function exportInto(dataDir: string, exporters: ((dir: string) => Promise<void>)[], log: (line: string) => void): Promise<{ complete: boolean }> {
  mkdirSync(path.dirname(dataDir), { recursive: true });
  const staging = mkdtempSync(`${dataDir}.export-`);
  try {
    const results = await Promise.allSettled(exporters.map((exporter) => exporter(staging)));
    for (const result of results) {
      if (result.status === "rejected") log(`Export incomplete: ${(result.reason as Error).message}`);
    }
    const complete = results.every((result) => result.status === "fulfilled");
    for (const part of [EXPORT.firestore, EXPORT.auth, EXPORT.storage]) {
      const previous = path.join(dataDir, part);
      if (!existsSync(path.join(staging, part)) && existsSync(previous)) renameSync(previous, path.join(staging, part));
    }
    const version = firebaseToolsVersion();
    writeFileSync(
      path.join(staging, EXPORT.metadata),
      JSON.stringify(
        {
          version,
          ...(existsSync(path.join(staging, EXPORT.firestoreMetadata))
            ? { firestore: { version, path: EXPORT.firestore, metadata_file: EXPORT.firestoreMetadata } }
            : {}),
          ...(existsSync(path.join(staging, EXPORT.auth)) ? { auth: { version, path: EXPORT.auth } } : {}),
          ...(existsSync(path.join(staging, EXPORT.storage)) ? { storage: { version, path: EXPORT.storage } } : {}),
        },
        null,
        2,
      ),
    );
    rmSync(dataDir, { recursive: true, force: true });
    renameSync(staging, dataDir);
    return { complete };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

export function firebaseToolsVersion(): string {
  return JSON.parse(readFileSync(require.resolve("firebase-tools/package.json"), "utf8")).version;
}
