/**
 * The local Firebase stack: the official Cloud Firestore emulator, firebase-tools' jar or the
 * google-cloud-cli's (firestore.ts), and firebase-tools' Auth and Storage emulators in this process
 * (firebase-tools-emulators.ts), on the addresses of firebase.json (addresses.ts). Emulators
 * whose host variable is already set (FIRESTORE_EMULATOR_HOST, FIREBASE_AUTH_EMULATOR_HOST,
 * STORAGE_EMULATOR_HOST / FIREBASE_STORAGE_EMULATOR_HOST) are used as they are, not started.
 *
 * With a `dataDir`, the emulators it starts load that folder's data at start and write theirs
 * back with `exportData()` (export.ts).
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { HOST } from "./addresses";
import { EXPORT, exportInto } from "./export";
import { startInProcessEmulators } from "./firebase-tools-emulators";
import { exportFirestore, startFirestore } from "./firestore";

export { assertPortsFree, freePort, LOCAL_PORTS, LOCAL_PROJECT_ID, PortsTakenError, type PortUse } from "./addresses";
export { MissingFirestoreEmulatorError, stopSupervisor, SUPERVISOR } from "./firestore";

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
  /** Writes what the emulators hold; `complete: false` when one could not export (the previous stop's part is kept). */
  exportData(): Promise<{ complete: boolean }>;
  stop(): Promise<void>;
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
      : startFirestore(ports.firestore, imported && path.join(imported, EXPORT.firestoreMetadata), log).then((emulator) => {
          stops.push(emulator.stop);
          exporters.push((dir) => exportFirestore(emulator.host, projectId, dir, EXPORT.firestore));
          void emulator.exited.then((code) => reportExit(`The Firestore emulator stopped (exit ${code}).`));
          log(`Firestore emulator on ${emulator.host} (${emulator.source})`);
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
      return exportInto(dataDir, exporters, log);
    },
    stop: () => stopAll(stops),
  };
}

async function stopAll(stops: (() => Promise<void>)[]): Promise<void> {
  await Promise.allSettled(stops.reverse().map((stop) => stop()));
}
