/**
 * The deployable function, as `firebase deploy` ships it, run by firebase-tools' Functions
 * emulator: `lib/` built from `functions/`, discovered through a firebase.json, with its params
 * and secret from `functions/.env.local` and `functions/.secret.local`, pointed at the emulators
 * of the local stack. `npm run functions` and the smoke test both start it through here.
 */
import { execFile, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { LOCAL_STRIPE_WEBHOOK_SECRET } from "../functions/src/config";
import type { ServiceAccount } from "../functions/src/local";
import { freePort, stopSupervisor, SUPERVISOR } from "./local-stack";
import { HOST } from "./local-stack/addresses";

const ROOT = path.join(__dirname, "..");
const FUNCTIONS_DIR = path.join(ROOT, "functions");
const SECRET_FILE = path.join(FUNCTIONS_DIR, ".secret.local");
const PARAMS_FILE = path.join(FUNCTIONS_DIR, ".env.local");

/** The runtime firebase.json deploys the function on. */
function deployRuntime(): string {
  return JSON.parse(readFileSync(path.join(ROOT, "firebase.json"), "utf8")).functions[0].runtime;
}

export interface FunctionsEmulator {
  /** `http://127.0.0.1:<port>/<project>/us-central1/api/api/v1` */
  apiBase: string;
  /** Settles if the emulator stops by itself, with its last output. */
  exited: Promise<string>;
  stop(): Promise<void>;
}

/**
 * The Functions emulator's local files, written only where missing (a developer's own values
 * stay): the secrets MODULE_SIGNING_KEYS and STRIPE_WEBHOOK_SECRET, and the params, so the
 * emulator never prompts. Says which files it created, and which existing ones it completed with
 * a missing secret.
 */
export function ensureFunctionsLocalFiles(moduleSigningKeys: string, bucket: string): { created: string[]; completed: string[] } {
  const created: string[] = [];
  const completed: string[] = [];
  const existing = existsSync(SECRET_FILE) ? readFileSync(SECRET_FILE, "utf8") : null;
  const secrets = existing ?? "";
  const missing = [
    ...(/^MODULE_SIGNING_KEYS=/m.test(secrets) ? [] : [`MODULE_SIGNING_KEYS=${moduleSigningKeys}`]),
    ...(/^STRIPE_WEBHOOK_SECRET=/m.test(secrets) ? [] : [`STRIPE_WEBHOOK_SECRET=${LOCAL_STRIPE_WEBHOOK_SECRET}`]),
  ];
  if (missing.length > 0) {
    writeFileSync(SECRET_FILE, `${secrets}${secrets && !secrets.endsWith("\n") ? "\n" : ""}${missing.join("\n")}\n`, { mode: 0o600 });
    (existing === null ? created : completed).push(SECRET_FILE);
  }
  if (!existsSync(PARAMS_FILE)) {
    writeFileSync(
      PARAMS_FILE,
      `# Params of the api function in the Functions emulator (npm run functions); no proxy is in front of it.\nSTORAGE_BUCKET=${bucket}\nTRUST_PROXY_HOPS=0\n`,
    );
    created.push(PARAMS_FILE);
  }
  return { created, completed };
}

export async function startFunctionsEmulator(options: {
  projectId: string;
  /** The Functions emulator's port; its helper emulators get free ports. */
  port: number;
  /** Host variables of the emulators the function talks to (LocalStack.env). */
  emulatorEnv: Record<string, string>;
  /** A key the function's Admin SDK signs V4 URLs with (none of Google's metadata server here). */
  serviceAccount: ServiceAccount;
  /** Where the generated firebase.json and credentials go. */
  workDir: string;
  log?: (line: string) => void;
}): Promise<FunctionsEmulator> {
  const log = options.log ?? (() => {});
  log("Building functions/lib…");
  await promisify(execFile)("npm", ["run", "build"], { cwd: FUNCTIONS_DIR });

  mkdirSync(options.workDir, { recursive: true });
  const credentials = path.join(options.workDir, "function-credentials.json");
  writeFileSync(
    credentials,
    JSON.stringify({
      type: "service_account",
      project_id: options.projectId,
      client_email: options.serviceAccount.clientEmail,
      private_key: options.serviceAccount.privateKey,
    }),
    { mode: 0o600 },
  );
  const [hub, logging, eventarc, tasks] = await Promise.all(Array.from({ length: 4 }, freePort));
  const config = path.join(options.workDir, "firebase.functions-emulator.json");
  writeFileSync(
    config,
    JSON.stringify({
      functions: [{ source: path.relative(options.workDir, FUNCTIONS_DIR), codebase: "default", runtime: deployRuntime() }],
      emulators: {
        functions: { host: HOST, port: options.port },
        hub: { host: HOST, port: hub },
        logging: { host: HOST, port: logging },
        eventarc: { host: HOST, port: eventarc },
        tasks: { host: HOST, port: tasks },
        ui: { enabled: false },
      },
    }),
  );

  let output = "";
  const firebase = spawn(
    process.execPath,
    [SUPERVISOR, path.join(ROOT, "node_modules", ".bin", "firebase"), "emulators:start", "--only", "functions", "--project", options.projectId, "--config", config],
    {
      cwd: options.workDir,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, ...options.emulatorEnv, GOOGLE_APPLICATION_CREDENTIALS: credentials },
    },
  );
  firebase.stdout!.on("data", (chunk: Buffer) => (output = (output + chunk.toString()).slice(-8000)));
  firebase.stderr!.on("data", (chunk: Buffer) => (output = (output + chunk.toString()).slice(-8000)));
  let stopping = false;
  const exited = new Promise<string>((resolve) =>
    firebase.once("exit", (code) => {
      if (!stopping) resolve(`The Functions emulator stopped (exit ${code}):\n${output}`);
    }),
  );
  const stop = () => {
    stopping = true;
    return stopSupervisor(firebase, 15_000);
  };

  const apiBase = functionsApiBase(options.projectId, options.port);
  // The first request loads lib/ in a new worker: on a machine busy with the other test files
  // (a browser, npm start) that has taken over a minute.
  const deadline = Date.now() + 150_000;
  while (Date.now() < deadline && firebase.exitCode === null) {
    const health = await fetch(`${apiBase}/health`, { signal: AbortSignal.timeout(20_000) }).catch(() => null);
    if (health?.status === 200) return { apiBase, exited, stop };
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  await stop();
  throw new Error(`The Functions emulator did not serve the api function:\n${output.slice(-3000)}`);
}

/** Where the Functions emulator serves the api function's /api/v1. */
export const functionsApiBase = (projectId: string, port: number) => `http://${HOST}:${port}/${projectId}/us-central1/api/api/v1`;
