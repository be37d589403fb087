/**
 * The local Firebase stack of LOCAL-STACK.md: the official Cloud Firestore emulator of the
 * google-cloud-cli, and firebase-tools' Auth and Storage emulators in this process. Emulators
 * whose host variable is already set (FIRESTORE_EMULATOR_HOST, FIREBASE_AUTH_EMULATOR_HOST,
 * STORAGE_EMULATOR_HOST / FIREBASE_STORAGE_EMULATOR_HOST) are used as they are, not started.
 *
 * With a `dataDir`, the emulators it starts load that folder's data at start and write theirs
 * back with `exportData()`, in the layout of `firebase emulators:export`, so the official suite
 * can `--import` it too.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from "node:fs";
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
  /** Settles when an emulator this stack started stops by itself, with what happened. */
  exited: Promise<string>;
  /** Writes the data of the emulators this stack started to its dataDir. */
  exportData(): Promise<void>;
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

/** Ports another program holds: one line each, saying what to do. */
export class PortsTakenError extends Error {
  constructor(readonly lines: string[]) {
    super(lines.join("\n"));
  }
}

const HOST = "127.0.0.1";
/** Names inside a data folder, as `firebase emulators:export` writes them. */
const EXPORT = {
  metadata: "firebase-export-metadata.json",
  firestore: "firestore_export",
  firestoreMetadata: "firestore_export/firestore_export.overall_export_metadata",
  auth: "auth_export",
  storage: "storage_export",
} as const;

export interface PortUse {
  port: number;
  /** What would listen there, e.g. "the Auth emulator". */
  what: string;
  /** The setting that points the stack at an emulator already running there instead, e.g. "FIRESTORE_EMULATOR_HOST=127.0.0.1:8080". */
  useExisting?: string;
}

/** Refuses to start anything while one of the ports is held by another program. */
export async function assertPortsFree(uses: PortUse[]): Promise<void> {
  const taken = (await Promise.all(uses.map(async (use) => ((await isPortFree(use.port)) ? null : use)))).filter(
    (use): use is PortUse => use !== null,
  );
  if (taken.length === 0) return;
  throw new PortsTakenError(
    taken.map(
      ({ port, what, useExisting }) =>
        `Port ${port} (${what}) on ${HOST} is in use by another program (another \`npm start\`?): stop it` +
        (useExisting ? `, or set ${useExisting} to use the emulator that is there.` : "."),
    ),
  );
}

function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen(port, HOST, () => probe.close(() => resolve(true)));
  });
}

export async function startLocalStack(options: {
  projectId: string;
  ports: StackPorts;
  log?: (line: string) => void;
  /** Where data is loaded from at start (unless `fresh`) and exported to; none: nothing is kept. */
  dataDir?: string;
  fresh?: boolean;
}): Promise<LocalStack> {
  const log = options.log ?? (() => {});
  const { projectId, ports, dataDir } = options;
  const stops: (() => Promise<void>)[] = [];
  const exporters: ((dir: string) => Promise<void>)[] = [];
  const env: Record<string, string> = {};
  const imported = dataDir && !options.fresh && existsSync(path.join(dataDir, EXPORT.metadata)) ? dataDir : undefined;
  let reportExit: (what: string) => void = () => {};
  const exited = new Promise<string>((resolve) => (reportExit = resolve));

  try {
    const existingFirestore = process.env.FIRESTORE_EMULATOR_HOST;
    const existingAuth = process.env.FIREBASE_AUTH_EMULATOR_HOST;
    const existingStorage =
      process.env.STORAGE_EMULATOR_HOST ??
      (process.env.FIREBASE_STORAGE_EMULATOR_HOST ? `http://${process.env.FIREBASE_STORAGE_EMULATOR_HOST}` : undefined);

    const firestore = existingFirestore
      ? Promise.resolve(existingFirestore).then((host) => (log(`Firestore: using ${host}`), host))
      : startFirestore(ports.firestore, imported && path.join(imported, EXPORT.firestoreMetadata)).then((emulator) => {
          stops.push(emulator.stop);
          exporters.push((dir) => exportFirestore(emulator.host, projectId, dir));
          void emulator.exited.then((code) => reportExit(`The Firestore emulator stopped (exit ${code}).`));
          log(`Firestore emulator on ${emulator.host}`);
          return emulator.host;
        });
    const inProcess =
      existingAuth && existingStorage
        ? Promise.resolve()
        : startInProcessEmulators(projectId, {
            auth: existingAuth ? undefined : ports.auth,
            storage: existingStorage ? undefined : ports.storage,
          }).then(async (emulators) => {
            stops.push(emulators.stop);
            exporters.push(emulators.exportData);
            if (imported) await emulators.importData(imported);
          });

    const [firestoreHost] = await Promise.all([firestore, inProcess]);
    const authHost = existingAuth ?? `${HOST}:${ports.auth}`;
    const storageUrl = existingStorage ?? `http://${HOST}:${ports.storage}`;
    if (existingAuth) log(`Auth: using ${authHost}`);
    else log(`Auth emulator on ${authHost}`);
    if (existingStorage) log(`Storage: using ${storageUrl}`);
    else log(`Storage emulator on ${storageUrl}`);
    if (imported) log(`Data loaded from ${path.relative(process.cwd(), imported) || "."}`);

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
  return {
    env,
    exited,
    exportData: async () => {
      if (!dataDir) throw new Error("This stack has no data folder.");
      await exportInto(dataDir, exporters, log);
    },
    stop: () => stopAll(stops),
  };
}

async function stopAll(stops: (() => Promise<void>)[]): Promise<void> {
  await Promise.allSettled(stops.reverse().map((stop) => stop()));
}

/**
 * Exports into a fresh folder beside `dataDir`, then swaps it in, so a failed export never leaves
 * half a data folder. What an emulator could not export (it died) is kept from the previous export.
 */
async function exportInto(dataDir: string, exporters: ((dir: string) => Promise<void>)[], log: (line: string) => void): Promise<void> {
  mkdirSync(path.dirname(dataDir), { recursive: true });
  const staging = mkdtempSync(`${dataDir}.export-`);
  try {
    const results = await Promise.allSettled(exporters.map((exporter) => exporter(staging)));
    for (const result of results) {
      if (result.status === "rejected") log(`Export incomplete: ${(result.reason as Error).message}`);
    }
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
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

function firebaseToolsVersion(): string {
  return JSON.parse(readFileSync(require.resolve("firebase-tools/package.json"), "utf8")).version;
}

async function exportFirestore(host: string, projectId: string, dir: string): Promise<void> {
  const response = await fetch(`http://${host}/emulator/v1/projects/${projectId}:export`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      database: `projects/${projectId}/databases/(default)`,
      export_directory: path.resolve(dir),
      export_name: EXPORT.firestore,
    }),
  });
  if (!response.ok) throw new Error(`Firestore export answered ${response.status}: ${await response.text()}`);
}

interface FirestoreCommand {
  command: string;
  args: string[];
}

/**
 * The emulator's jar run by java directly when the SDK has it (about 2 s to start, and the
 * process we stop is the JVM itself), else `gcloud emulators firestore start` (about 5 s).
 */
function firestoreCommand(port: number, seed: string | undefined): FirestoreCommand {
  const args = ["start", `--host=${HOST}`, `--port=${port}`, "--database-mode=firestore-native", ...(seed ? [`--seed_from_export=${seed}`] : [])];
  const override = process.env.FIRESTORE_EMULATOR_BIN;
  if (override) return { command: override, args };
  const gcloud = findOnPath("gcloud");
  if (!gcloud) throw new MissingFirestoreEmulatorError();
  const sdkRoot = path.dirname(path.dirname(realpathSync(gcloud)));
  const jar = path.join(sdkRoot, "platform", "cloud-firestore-emulator", "cloud-firestore-emulator.jar");
  if (existsSync(jar)) {
    return {
      command: process.env.JAVA ?? "java",
      args: ["-Duser.language=en", "-cp", jar, "com.google.cloud.datastore.emulator.firestore.CloudFirestore", ...args],
    };
  }
  const probe = spawnSync(gcloud, ["emulators", "firestore", "--help"], { stdio: "ignore" });
  if (probe.status !== 0) throw new MissingFirestoreEmulatorError();
  return {
    command: gcloud,
    args: ["emulators", "firestore", "start", `--host-port=${HOST}:${port}`, ...(seed ? [`--import-data=${seed}`] : [])],
  };
}

const SUPERVISOR = path.join(__dirname, "supervise.cjs");

async function startFirestore(
  port: number,
  seed: string | undefined,
): Promise<{ host: string; stop: () => Promise<void>; exited: Promise<number | null> }> {
  const { command, args } = firestoreCommand(port, seed && existsSync(seed) ? seed : undefined);
  // Under a supervisor in a process group of its own: a terminal's Ctrl-C reaches only us (we
  // export before we stop it), and it goes down with us even if we are killed outright.
  const child = spawn(process.execPath, [SUPERVISOR, command, ...args], { detached: true, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  let stopping = false;
  const stop = () => {
    stopping = true;
    return stopSupervisor(child);
  };
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
  return { host, stop, exited: exited.then((code) => (stopping ? new Promise<never>(() => {}) : code)) };
}

/** Stops a process started under supervise.cjs: its whole group, by force after `graceMs`. */
export function stopSupervisor(child: ChildProcess, graceMs = 10_000): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return resolve();
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // already gone
      }
      resolve();
    }, graceMs);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

interface InProcessEmulators {
  importData(dir: string): Promise<void>;
  exportData(dir: string): Promise<void>;
  stop(): Promise<void>;
}

/**
 * firebase-tools' Auth and Storage emulators, in this process (internals pinned by the lock file).
 * Storage runs without its Java rules engine: the service is the only client, and rules deny
 * clients anyway. The Auth emulator compiles the validators of its whole OpenAPI spec at start
 * (~15 s of CPU); asking exegesis to compile them on first use keeps validation and starts in ~1 s.
 */
async function startInProcessEmulators(projectId: string, ports: { auth?: number; storage?: number }): Promise<InProcessEmulators> {
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
  const imports: ((dir: string) => Promise<void>)[] = [];
  const exports: ((dir: string) => Promise<void>)[] = [];
  if (ports.auth !== undefined) {
    const auth = new AuthEmulator({ projectId, host: HOST, port: ports.auth });
    await EmulatorRegistry.start(auth);
    const authUrl = `http://${HOST}:${ports.auth}`;
    imports.push(async (dir) => {
      if (existsSync(path.join(dir, EXPORT.auth))) await auth.importData(path.join(dir, EXPORT.auth), projectId, { initiatedBy: "start" });
    });
    exports.push(async (dir) => {
      const target = path.join(dir, EXPORT.auth);
      mkdirSync(target, { recursive: true });
      const owner = { headers: { Authorization: "Bearer owner" } };
      const [accounts, config] = await Promise.all([
        fetch(`${authUrl}/identitytoolkit.googleapis.com/v1/projects/${projectId}/accounts:batchGet?maxResults=-1`, owner),
        fetch(`${authUrl}/emulator/v1/projects/${projectId}/config`, owner),
      ]);
      if (!accounts.ok || !config.ok) throw new Error(`Auth export answered ${accounts.status}/${config.status}.`);
      writeFileSync(path.join(target, "accounts.json"), await accounts.text());
      writeFileSync(path.join(target, "config.json"), await config.text());
    });
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
    imports.push(async (dir) => {
      if (existsSync(path.join(dir, EXPORT.storage, "buckets.json"))) {
        storage.storageLayer.import(path.join(dir, EXPORT.storage), { initiatedBy: "start" });
      }
    });
    exports.push(async (dir) => {
      const target = path.join(dir, EXPORT.storage);
      mkdirSync(target, { recursive: true });
      await storage.storageLayer.export(target, { initiatedBy: "export" });
    });
  }
  return {
    importData: async (dir) => {
      for (const load of imports) await load(dir);
    },
    exportData: async (dir) => {
      await Promise.all(exports.map((write) => write(dir)));
    },
    stop: () => EmulatorRegistry.stopAll(),
  };
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
