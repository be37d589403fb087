/**
 * A server for `npm run bench`, in a process of its own so that its memory and CPU are its own:
 * the API on the emulators named by the environment (`--api`), or a bare Express handler
 * (`--bare`), the baseline. It listens on BENCH_PORT, says "ready" over IPC, and answers the
 * message "counts" with its backend call counts, once its pending download counts are written.
 */
import { createRequire } from "node:module";
import path from "node:path";
import { createApp } from "../functions/src/app";
import { backendCallCounts } from "../functions/src/core/deadline";
import { silentLogger } from "../functions/src/core/logger";
import { localDeps, localServer } from "../functions/src/local";
import { drainDownloadCounters } from "../functions/src/modules/download-counter";

async function main(): Promise<void> {
  const port = Number(process.env.BENCH_PORT);
  let handler;
  if (process.argv.includes("--bare")) {
    const express = createRequire(path.join(__dirname, "..", "functions", "package.json"))("express");
    handler = express();
    handler.get("/", (_req: unknown, res: { json(body: unknown): void }) => res.json({ status: "ok" }));
  } else {
    const deps = await localDeps({ serviceAccount: JSON.parse(process.env.BENCH_SERVICE_ACCOUNT!), env: process.env, logger: silentLogger, appName: "bench-server" });
    handler = createApp(deps);
  }
  localServer(handler).listen(port, "127.0.0.1", () => process.send?.("ready"));
  process.on("message", async (message) => {
    // Counts reported after every pending download count is written.
    if (message === "counts") process.send?.({ counts: backendCallCounts(), drained: await drainDownloadCounters() });
  });
  process.on("disconnect", () => process.exit(0));
}

void main();
