import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import type { Server } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { HOST } from "./addresses";
import { EXPORT, firebaseToolsVersion } from "./export";

/** What the local stack uses of the Auth emulator's state of one project. */
interface AuthProjectState {
  getUserByLocalId(localId: string): object | undefined;
  updateUserByLocalId(localId: string, fields: { validSince: string }): void;
}

export interface InProcessEmulators {
  importData(dir: string): Promise<void>;
  exportData(dir: string): Promise<void>;
  stop(): Promise<void>;
}

/**
 * firebase-tools has no public entry point that starts one emulator in a process (the CLI's
 * `emulators:start` insists on downloading the Storage rules engine, which cannot happen offline),
 * so these are its internals, pinned by the lock file. Everything relied on is checked here, by
 * name, before use: an upgrade that moves any of it fails with this message, at start and in
 * the unit test beside this file, instead of somewhere deep in an emulator.
 */
/* eslint-disable @typescript-eslint/no-require-imports, @typescript-eslint/no-explicit-any */
export function firebaseToolsInternals(): {
  EmulatorRegistry: any;
  AuthEmulator: any;
  createAuthApp: any;
  createDestroyer: any;
  StorageEmulator: any;
  createStorageApp: any;
  exegesisExpress: any;
  getDownloadDetails: (name: string) => { downloadPath: string; opts: { cacheDir: string } };
  downloadEmulator: (name: string) => Promise<void>;
} {
  const loaded = {
    exegesisExpress: require("exegesis-express"),
    EmulatorRegistry: require("firebase-tools/lib/emulator/registry").EmulatorRegistry,
    AuthEmulator: require("firebase-tools/lib/emulator/auth").AuthEmulator,
    createAuthApp: require("firebase-tools/lib/emulator/auth/server").createApp,
    createDestroyer: require("firebase-tools/lib/utils").createDestroyer,
    StorageEmulator: require("firebase-tools/lib/emulator/storage").StorageEmulator,
    createStorageApp: require("firebase-tools/lib/emulator/storage/server").createApp,
    // Where firebase-tools keeps and downloads its Firestore emulator jar (firestore.ts).
    getDownloadDetails: require("firebase-tools/lib/emulator/downloadableEmulators").getDownloadDetails,
    downloadEmulator: require("firebase-tools/lib/emulator/download").downloadEmulator,
  };
  const storage = typeof loaded.StorageEmulator === "function" ? new loaded.StorageEmulator({ projectId: "probe", host: HOST, port: 0, auto_download: false }) : undefined;
  const expected: [string, unknown][] = [
    ["exegesis-express middleware()", loaded.exegesisExpress?.middleware],
    ["EmulatorRegistry.start()", loaded.EmulatorRegistry?.start],
    ["EmulatorRegistry.stopAll()", loaded.EmulatorRegistry?.stopAll],
    ["AuthEmulator", loaded.AuthEmulator],
    ["AuthEmulator#importData()", loaded.AuthEmulator?.prototype?.importData],
    ["auth/server createApp()", loaded.createAuthApp],
    ["utils createDestroyer()", loaded.createDestroyer],
    ["StorageEmulator", loaded.StorageEmulator],
    ["storage/server createApp()", loaded.createStorageApp],
    ["StorageEmulator#_persistence.reset()", storage?._persistence?.reset],
    ["StorageEmulator#_rulesRuntime", storage?._rulesRuntime],
    ["StorageEmulator#storageLayer.import()", storage?.storageLayer?.import],
    ["StorageEmulator#storageLayer.export()", storage?.storageLayer?.export],
    ["downloadableEmulators getDownloadDetails()", loaded.getDownloadDetails],
    ["download downloadEmulator()", loaded.downloadEmulator],
  ];
  const missing = expected.filter(([, value]) => value === undefined || value === null).map(([name]) => name);
  if (missing.length > 0) {
    throw new Error(`firebase-tools ${firebaseToolsVersion()} no longer has what the local stack uses: ${missing.join(", ")}. Pin the earlier version, or adapt tools/local-stack/firebase-tools-emulators.ts.`);
  }
  return loaded;
}
/* eslint-enable @typescript-eslint/no-require-imports, @typescript-eslint/no-explicit-any */

/**
 * Node's clients drop an idle keep-alive socket after 5 s, and Node's servers close one after 5 s
 * too: a request sent on a socket the server is closing that instant fails with "socket hang up",
 * which Cloud Storage's client does not retry. Servers that keep idle sockets longer leave the
 * closing to the client.
 */
function outlastingClients(server: Server): Server {
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  return server;
}

/**
 * firebase-tools' Auth and Storage emulators, in this process. Storage runs without its Java
 * rules engine: the service is the only client, and rules deny clients anyway. The Auth emulator
 * compiles the validators of its whole OpenAPI spec at start (~15 s of CPU); asking exegesis to
 * compile them on first use keeps validation and starts in ~1 s.
 */
export async function startInProcessEmulators(projectId: string, ports: { auth?: number; storage?: number }): Promise<InProcessEmulators> {
  const { exegesisExpress, EmulatorRegistry, AuthEmulator, createAuthApp, createDestroyer, StorageEmulator, createStorageApp } = firebaseToolsInternals();
  if (!exegesisExpress.__lazySchemas) {
    const middleware = exegesisExpress.middleware;
    exegesisExpress.middleware = (spec: unknown, options: object) =>
      middleware(spec, { ...options, lazyCompileValidationSchemas: true });
    exegesisExpress.__lazySchemas = true;
  }
  const imports: ((dir: string) => Promise<void>)[] = [];
  const exports: ((dir: string) => Promise<void>)[] = [];
  if (ports.auth !== undefined) {
    const auth = new AuthEmulator({ projectId, host: HOST, port: ports.auth });
    // The emulator as its own start() makes it, but with its project state in our hands (below).
    const projectStates = new Map<string, AuthProjectState>();
    auth.start = async () => {
      const server = outlastingClients((await createAuthApp(projectId, auth.args.singleProjectMode, projectStates)).listen(ports.auth, HOST));
      auth.destroyServer = createDestroyer(server);
    };
    await EmulatorRegistry.start(auth);
    const authUrl = `http://${HOST}:${ports.auth}`;
    imports.push(async (dir) => {
      const exported = path.join(dir, EXPORT.auth);
      if (!existsSync(exported)) return;
      await auth.importData(exported, projectId, { initiatedBy: "start" });
      // An import makes every account valid only since the import, which revokes every session
      // signed in before it (saved `mpkg login`s, the pages' sign-ins). Each account gets back the
      // validSince it had, so only what revoked sessions before the restart still does.
      const { users = [] } = JSON.parse(readFileSync(path.join(exported, "accounts.json"), "utf8")) as { users?: { localId: string; validSince?: string }[] };
      const state = projectStates.get(projectId);
      for (const user of users) {
        if (user.validSince && state?.getUserByLocalId(user.localId)) state.updateUserByLocalId(user.localId, { validSince: user.validSince });
      }
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
    // Its own start(), with the server kept (below).
    storage.start = async () => {
      storage._app = await createStorageApp(projectId, storage);
      storage.destroyServer = createDestroyer(outlastingClients(storage._app.listen(ports.storage, HOST)));
    };
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
