import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, realpathSync } from "node:fs";
import path from "node:path";
import { HOST } from "./addresses";
import { firebaseToolsInternals } from "./firebase-tools-emulators";
import { jarMainClass } from "./jar-manifest";

/**
 * The official Cloud Firestore emulator (firebase-tools' jar, or the google-cloud-cli's), as a
 * child process under a supervisor (supervise.cjs), and its export.
 */

export class MissingFirestoreEmulatorError extends Error {
  constructor(reason: string) {
    super(
      `The Cloud Firestore emulator was not found, and ${reason}. Any one of these gives it: ` +
        "`npx firebase setup:emulators:firestore` on a machine online (firebase-tools' own copy, in ~/.cache/firebase/emulators); " +
        "the google-cloud-cli's (Debian/Ubuntu: `apt-get install google-cloud-cli-firestore-emulator` from Google's apt repository, " +
        "elsewhere `gcloud components install cloud-firestore-emulator`); or FIRESTORE_EMULATOR_HOST set to a running Firestore emulator.",
    );
  }
}

export async function exportFirestore(host: string, projectId: string, dir: string, name: string): Promise<void> {
  const response = await fetch(`http://${host}/emulator/v1/projects/${projectId}:export`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      database: `projects/${projectId}/databases/(default)`,
      export_directory: path.resolve(dir),
      export_name: name,
    }),
  });
  if (!response.ok) throw new Error(`Firestore export answered ${response.status}: ${await response.text()}`);
}

interface FirestoreCommand {
  command: string;
  args: string[];
}

/** Where a Firestore emulator can come from on this machine (injected by the tests). */
export interface EmulatorSources {
  env: NodeJS.ProcessEnv;
  /** firebase-tools' emulator cache: FIREBASE_EMULATORS_PATH, else ~/.cache/firebase/emulators. */
  cacheDir: string;
  /** The jar the installed firebase-tools downloads (`cloud-firestore-emulator-v<version>.jar`). */
  expectedJar: string;
  findOnPath: (command: string) => string | null;
}

export type FoundEmulator =
  | { kind: "override"; command: string }
  | { kind: "jar"; jar: string; from: "firebase-tools" | "google-cloud-cli" }
  | { kind: "gcloud"; command: string };

/**
 * The emulator to run, in this order: FIRESTORE_EMULATOR_BIN; firebase-tools' cached jar (the
 * version this firebase-tools downloads, else the newest there); the google-cloud-cli's jar, else
 * its `gcloud emulators firestore`. Null when there is none: then firebase-tools downloads its own.
 */
export function findFirestoreEmulator(sources: EmulatorSources): FoundEmulator | null {
  const override = sources.env.FIRESTORE_EMULATOR_BIN;
  if (override) return { kind: "override", command: override };
  const cached = cachedJars(sources.cacheDir);
  const expected = path.basename(sources.expectedJar);
  const jar = cached.find((file) => path.basename(file) === expected) ?? cached[0];
  if (jar) return { kind: "jar", jar, from: "firebase-tools" };
  const gcloud = sources.findOnPath("gcloud");
  if (!gcloud) return null;
  const sdkJar = path.join(path.dirname(path.dirname(realpathSync(gcloud))), "platform", "cloud-firestore-emulator", "cloud-firestore-emulator.jar");
  if (existsSync(sdkJar)) return { kind: "jar", jar: sdkJar, from: "google-cloud-cli" };
  const probe = spawnSync(gcloud, ["emulators", "firestore", "--help"], { stdio: "ignore" });
  return probe.status === 0 ? { kind: "gcloud", command: gcloud } : null;
}

/** `cloud-firestore-emulator-v<version>.jar` files of a cache folder, newest version first. */
function cachedJars(cacheDir: string): string[] {
  const pattern = /^cloud-firestore-emulator-v(\d+)\.(\d+)\.(\d+)\.jar$/;
  const files = existsSync(cacheDir) ? readdirSync(cacheDir).filter((name) => pattern.test(name)) : [];
  const version = (name: string) => pattern.exec(name)!.slice(1).map(Number);
  return files
    .sort((a, b) => {
      const [x, y] = [version(a), version(b)];
      return y[0] - x[0] || y[1] - x[1] || y[2] - x[2];
    })
    .map((name) => path.join(cacheDir, name));
}

/** How to run what was found: a jar by java directly (about 2 s to start, and the process we stop is the JVM itself). */
export function firestoreCommand(found: FoundEmulator, port: number, seed: string | undefined, java = process.env.JAVA ?? "java"): FirestoreCommand {
  const gcloudArgs = ["start", `--host=${HOST}`, `--port=${port}`, "--database-mode=firestore-native", ...(seed ? [`--seed_from_export=${seed}`] : [])];
  switch (found.kind) {
    case "override":
      return { command: found.command, args: gcloudArgs };
    case "gcloud":
      return { command: found.command, args: ["emulators", "firestore", "start", `--host-port=${HOST}:${port}`, ...(seed ? [`--import-data=${seed}`] : [])] };
    case "jar":
      // firebase-tools' jar is executable and takes its arguments as firebase-tools passes them;
      // the google-cloud-cli's is a class path, started as its own wrapper script starts it.
      return jarMainClass(found.jar)
        ? { command: java, args: ["-Duser.language=en", "-jar", found.jar, "--host", HOST, "--port", String(port), ...(seed ? ["--seed_from_export", seed] : [])] }
        : { command: java, args: ["-Duser.language=en", "-cp", found.jar, "com.google.cloud.datastore.emulator.firestore.CloudFirestore", ...gcloudArgs] };
  }
}

function machineSources(): EmulatorSources {
  const details = firebaseToolsInternals().getDownloadDetails("firestore");
  return { env: process.env, cacheDir: details.opts.cacheDir, expectedJar: details.downloadPath, findOnPath };
}

/** The emulator on this machine, downloaded by firebase-tools into its cache when there is none (once, about 140 MB). */
async function resolveFirestoreEmulator(log: (line: string) => void): Promise<FoundEmulator> {
  const sources = machineSources();
  const found = findFirestoreEmulator(sources);
  if (found) return found;
  log(`No Firestore emulator on this machine: firebase-tools downloads its own into ${sources.cacheDir} (once)…`);
  try {
    await firebaseToolsInternals().downloadEmulator("firestore");
  } catch (error) {
    throw new MissingFirestoreEmulatorError(`firebase-tools could not download it (${(error as Error).message})`);
  }
  return findFirestoreEmulator(sources) ?? Promise.reject(new MissingFirestoreEmulatorError("firebase-tools' download left no jar"));
}

/** Runs a command in a process group that goes down with its parent (supervise.cjs). */
export const SUPERVISOR = path.join(__dirname, "supervise.cjs");

export async function startFirestore(
  port: number,
  seed: string | undefined,
  log: (line: string) => void = () => {},
): Promise<{ host: string; stop: () => Promise<void>; exited: Promise<number | null>; source: string }> {
  const found = await resolveFirestoreEmulator(log);
  const { command, args } = firestoreCommand(found, port, seed && existsSync(seed) ? seed : undefined);
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
      if (child.exitCode !== null) throw new Error(`The Firestore emulator (${describe(found)}) exited (${child.exitCode}):\n${stderr}${javaHint(stderr, command)}`);
      const response = await fetch(`http://${host}/`).catch(() => null);
      return response?.ok === true && (await response.text()).startsWith("Ok");
    }, 60_000, "the Firestore emulator");
  } catch (error) {
    await stop();
    throw error;
  }
  return { host, stop, exited: exited.then((code) => (stopping ? new Promise<never>(() => {}) : code)), source: describe(found) };
}

function describe(found: FoundEmulator): string {
  if (found.kind !== "jar") return found.command;
  return found.from === "firebase-tools" ? `firebase-tools' ${found.jar}` : `the google-cloud-cli's ${found.jar}`;
}

/** What to do when java itself is the problem: absent, or older than the jar was built for. */
function javaHint(stderr: string, command: string): string {
  if (/spawn \S+ ENOENT/.test(stderr)) return `\n\`${command}\` was not found: install Java (17 or newer; firebase-tools' jar may ask for 21), or set JAVA to it.`;
  if (stderr.includes("UnsupportedClassVersionError")) return "\nThis jar needs a newer Java than the one that ran it: install Java 21, or set JAVA to it.";
  return "";
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
