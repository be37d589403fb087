import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, realpathSync } from "node:fs";
import path from "node:path";
import { HOST } from "./addresses";

/**
 * The official Cloud Firestore emulator of the google-cloud-cli, as a child process under a
 * supervisor (supervise.cjs), and its export.
 */

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

/** Runs a command in a process group that goes down with its parent (supervise.cjs). */
export const SUPERVISOR = path.join(__dirname, "supervise.cjs");

export async function startFirestore(
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
