import { availableParallelism } from "node:os";
import path from "node:path";
import { Piscina } from "piscina";
import type { PackageEntryContent } from "../checks/service";
import type { SecretFinding } from "../checks/secrets";
import { ApiError } from "../core/errors";

/** What the examination of a package's entries found (examination-worker.ts). */
export interface ExaminedEntries {
  /** Every entry, in archive order, with its SHA-256; with its bytes only when it is among the kept paths. */
  entries: PackageEntryContent[];
  secrets: SecretFinding[];
}

/** The worker's answer: an invalid package is an answer too, since an ApiError does not cross threads. */
export type ExaminationResult = ExaminedEntries | { invalidPackage: string };

/**
 * A package's entries are inflated, checked, hashed and scanned for secrets in a worker thread
 * (piscina), in one task per package, not on the event loop: for 25 MiB of text that is about
 * 300 ms of CPU (secretlint alone takes about 12 ms per MiB) that every other request of the
 * instance would otherwise wait behind. The package is copied once and moved to the worker; only
 * the entries' hashes, the bytes of the `kept` paths and the findings come back. The pool starts its
 * threads on first use, one per CPU, and lets them go after 30 s idle. Run from the TypeScript
 * sources (tests, `npm start`), the threads load them through tsx.
 */
const fromSources = __filename.endsWith(".ts");
let pool: Piscina | undefined;

export async function examineEntries(bytes: Buffer, kept: string[]): Promise<ExaminedEntries> {
  pool ??= new Piscina({
    filename: path.join(__dirname, `examination-worker${path.extname(__filename)}`),
    minThreads: 0,
    maxThreads: availableParallelism(),
    idleTimeout: 30_000,
    ...(fromSources ? { execArgv: [...process.execArgv, "--require", "tsx/cjs"] } : {}),
  });
  // Copied once and moved: a clone would copy it twice on its way.
  const copy = new Uint8Array(bytes);
  const result = (await pool.run({ bytes: copy, kept }, { transferList: [copy.buffer] })) as ExaminationResult;
  if ("invalidPackage" in result) throw new ApiError("invalid_package", result.invalidPackage);
  // Bytes arrive as plain Uint8Arrays.
  return { ...result, entries: result.entries.map((entry) => ({ ...entry, bytes: entry.bytes && Buffer.from(entry.bytes.buffer, entry.bytes.byteOffset, entry.bytes.byteLength) })) };
}
