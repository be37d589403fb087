/**
 * The local Firebase stack of LOCAL-STACK.md: the official Cloud Firestore emulator of the
 * google-cloud-cli, and firebase-tools' Auth and Storage emulators in this process. Emulators
 * whose host variable is already set (FIRESTORE_EMULATOR_HOST, FIREBASE_AUTH_EMULATOR_HOST,
 * STORAGE_EMULATOR_HOST / FIREBASE_STORAGE_EMULATOR_HOST) are used as they are, not started.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, realpathSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

export interface StackPorts {
  firestore: number;
  auth: number;
  storage: number;
}

export interface LocalStack {
  /** Host variables for the Admin SDK, pointing at the running emulators. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

export class MissingFirestoreEmulatorError extends Error {
  constructor() {
    super(
      "The Cloud Firestore emulator was not found. Install the google-cloud-cli with its Firestore emulator " +
        "(Debian/Ubuntu: `apt-get install google-cloud-cli google-cloud-cli-firestore-emulator` from Google's apt " +
        "repository; elsewhere: `gcloud components install cloud-firestore-emulator`), or set " +
        "FIRESTORE_EMULATOR_HOST to a running Firestore emulator.",
    );
  }
}

const HOST = "127.0.0.1";

export async function startLocalStack(options: {
  projectId: string;
  ports: StackPorts;
  log?: (line: string) => void;
}): Promise<LocalStack> {
  const log = options.log ?? (() => {});
  const { projectId, ports } = options;
  const stops: (() => Promise<void>)[] = [];
  const env: Record<string, string> = {};

  try {
    const existingFirestore = process.env.FIRESTORE_EMULATOR_HOST;
    const existingAuth = process.env.FIREBASE_AUTH_EMULATOR_HOST;
    const existingStorage =
      process.env.STORAGE_EMULATOR_HOST ??
      (process.env.FIREBASE_STORAGE_EMULATOR_HOST ? `http://${process.env.FIREBASE_STORAGE_EMULATOR_HOST}` : undefined);

    const firestore = existingFirestore
      ? Promise.resolve(existingFirestore).then((host) => (log(`Firestore: using ${host}`), host))
      : startFirestore(ports.firestore).then(({ host, stop }) => (stops.push(stop), log(`Firestore emulator on ${host}`), host));
    const inProcess =
      existingAuth && existingStorage
        ? Promise.resolve()
        : startInProcessEmulators(projectId, {
            auth: existingAuth ? undefined : ports.auth,
            storage: existingStorage ? undefined : ports.storage,
          }).then((stop) => void stops.push(stop));

    const [firestoreHost] = await Promise.all([firestore, inProcess]);
    const authHost = existingAuth ?? `${HOST}:${ports.auth}`;
    const storageUrl = existingStorage ?? `http://${HOST}:${ports.storage}`;
    if (existingAuth) log(`Auth: using ${authHost}`);
    else log(`Auth emulator on ${authHost}`);
    if (existingStorage) log(`Storage: using ${storageUrl}`);
    else log(`Storage emulator on ${storageUrl}`);

    Object.assign(env, {
      FIRESTORE_EMULATOR_HOST: firestoreHost,
      FIREBASE_AUTH_EMULATOR_HOST: authHost,
      STORAGE_EMULATOR_HOST: storageUrl,
      FIREBASE_STORAGE_EMULATOR_HOST: storageUrl.replace(/^https?:\/\//, ""),
      METADATA_SERVER_DETECTION: "none",
    });
  } catch (error) {
    await stopAll(stops);
    throw error;
  }
  return { env, stop: () => stopAll(stops) };
}

async function stopAll(stops: (() => Promise<void>)[]): Promise<void> {
  await Promise.allSettled(stops.reverse().map((stop) => stop()));
}

/** The emulator's own launcher when the SDK has it (about 2 s), else `gcloud emulators` (about 5 s). */
function firestoreCommand(port: number): { command: string; args: string[] } {
  const override = process.env.FIRESTORE_EMULATOR_BIN;
  const args = ["start", `--host=${HOST}`, `--port=${port}`, "--database-mode=firestore-native"];
  if (override) return { command: override, args };
  const gcloud = findOnPath("gcloud");
  if (!gcloud) throw new MissingFirestoreEmulatorError();
  const sdkRoot = path.dirname(path.dirname(realpathSync(gcloud)));
  const launcher = path.join(sdkRoot, "platform", "cloud-firestore-emulator", "cloud_firestore_emulator");
  if (existsSync(launcher)) return { command: launcher, args };
  const probe = spawnSync(gcloud, ["emulators", "firestore", "--help"], { stdio: "ignore" });
  if (probe.status !== 0) throw new MissingFirestoreEmulatorError();
  return { command: gcloud, args: ["emulators", "firestore", "start", `--host-port=${HOST}:${port}`] };
}

async function startFirestore(port: number): Promise<{ host: string; stop: () => Promise<void> }> {
  const { command, args } = firestoreCommand(port);
  // Its own process group: the launcher forks a java child that outlives a plain kill.
  const child = spawn(command, args, { detached: true, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const stop = () => killGroup(child);
  const host = `${HOST}:${port}`;
  try {
    await waitUntil(async () => {
      if (child.exitCode !== null) throw new Error(`The Firestore emulator exited (${child.exitCode}):\n${stderr}`);
      const response = await fetch(`http://${host}/`).catch(() => null);
      return response?.ok === true && (await response.text()).startsWith("Ok");
    }, 60_000, "the Firestore emulator");
  } catch (error) {
    await stop();
    throw error;
  }
  return { host, stop };
}

function killGroup(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.pid === undefined) return resolve();
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // already gone
      }
      resolve();
    }, 5000);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    try {
      process.kill(-child.pid, "SIGTERM");
    } catch {
      clearTimeout(timer);
      resolve();
    }
  });
}

/**
 * firebase-tools' Auth and Storage emulators, in this process (internals pinned by the lock file).
 * Storage runs without its Java rules engine: the service is the only client, and rules deny
 * clients anyway. The Auth emulator compiles the validators of its whole OpenAPI spec at start
 * (~15 s of CPU); asking exegesis to compile them on first use keeps validation and starts in ~1 s.
 */
async function startInProcessEmulators(
  projectId: string,
  ports: { auth?: number; storage?: number },
): Promise<() => Promise<void>> {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const exegesisExpress = require("exegesis-express");
  if (!exegesisExpress.__lazySchemas) {
    const middleware = exegesisExpress.middleware;
    exegesisExpress.middleware = (spec: unknown, options: object) =>
      middleware(spec, { ...options, lazyCompileValidationSchemas: true });
    exegesisExpress.__lazySchemas = true;
  }
  const { EmulatorRegistry } = require("firebase-tools/lib/emulator/registry");
  const { AuthEmulator } = require("firebase-tools/lib/emulator/auth");
  const { StorageEmulator } = require("firebase-tools/lib/emulator/storage");
  /* eslint-enable @typescript-eslint/no-require-imports */
  if (ports.auth !== undefined) {
    await EmulatorRegistry.start(new AuthEmulator({ projectId, host: HOST, port: ports.auth }));
  }
  if (ports.storage !== undefined) {
    const storage = new StorageEmulator({ projectId, host: HOST, port: ports.storage, auto_download: false });
    // Its blobs go to one fixed folder under the system temp dir, which a second emulator on
    // the machine (npm test beside npm start, two CI runs) would wipe; give each its own.
    storage._persistence.reset(mkdtempSync(path.join(tmpdir(), "marketplace-storage-")));
    storage._rulesRuntime.start = async () => {};
    storage._rulesRuntime.stop = async () => {};
    const allowAll = { verify: async () => ({ permitted: true, issues: { exist: () => false, all: [] } }) };
    storage._rulesManager = { start: async () => {}, stop: async () => {}, getRuleset: () => allowAll };
    await EmulatorRegistry.start(storage);
  }
  return () => EmulatorRegistry.stopAll();
}

async function waitUntil(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`Timed out after ${timeoutMs / 1000} s waiting for ${what}.`);
}

function findOnPath(command: string): string | null {
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    const candidate = path.join(dir, command);
    if (dir && existsSync(candidate)) return candidate;
  }
  return null;
}

/** A TCP port free on 127.0.0.1 right now, for emulators that must not collide with others. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.unref();
    probe.on("error", reject);
    probe.listen(0, HOST, () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
