import type { PackageEntryContent } from "../checks/service";
import { findSecrets, MAX_SCANNED_ENTRY_BYTES, textOf, type SecretFinding } from "../checks/secrets";
import { ApiError } from "../core/errors";
import type { ExaminationResult } from "./examination";
import { verifyEntries } from "./package-entries";

/** One package examined in a worker thread of the examination pool (examination.ts). */
export default async function examine({ bytes, kept }: { bytes: Uint8Array; kept: string[] }): Promise<ExaminationResult> {
  const entries: PackageEntryContent[] = [];
  const secrets: SecretFinding[] = [];
  try {
    await verifyEntries(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), {
      keepBytesUpTo: MAX_SCANNED_ENTRY_BYTES,
      visit: async (entry) => {
        entries.push({ ...entry, bytes: kept.includes(entry.name) ? entry.bytes : null });
        const text = entry.bytes && textOf(entry.bytes);
        if (text) secrets.push(...(await findSecrets(entry.name, text)));
      },
    });
  } catch (error) {
    if (error instanceof ApiError && error.code === "invalid_package") return { invalidPackage: error.detail };
    throw error;
  }
  return { entries, secrets };
}
