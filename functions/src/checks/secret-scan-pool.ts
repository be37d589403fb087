import { availableParallelism } from "node:os";
import path from "node:path";
import { Piscina } from "piscina";
import type { SecretFinding } from "./secrets";

/**
 * The secret scan runs in worker threads (piscina), not on the event loop: secretlint takes about
 * 12 ms of CPU per MiB of text here, so a 25 MiB package would hold every other request of the
 * instance for a third of a second. The pool starts its threads on first use, one per CPU, and lets them go after
 * 30 s idle. Run from the TypeScript sources (tests, `npm start`), the threads load them through tsx.
 */
const fromSources = __filename.endsWith(".ts");
let pool: Piscina | undefined;

export function scanForSecrets(entryPath: string, text: string): Promise<SecretFinding[]> {
  pool ??= new Piscina({
    filename: path.join(__dirname, `secret-scan-worker${path.extname(__filename)}`),
    minThreads: 0,
    maxThreads: availableParallelism(),
    idleTimeout: 30_000,
    ...(fromSources ? { execArgv: [...process.execArgv, "--require", "tsx/cjs"] } : {}),
  });
  return pool.run({ path: entryPath, text });
}
