import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";

/**
 * Where the local stack listens: the emulators block of firebase.json is the one source of the
 * host, the ports and the project (.firebaserc), for `npm start`, the operator CLI's --emulators,
 * and the official suite alike. The Functions port is the API's (contract §7).
 */
const ROOT = path.join(__dirname, "..", "..");
const firebaseJson = JSON.parse(readFileSync(path.join(ROOT, "firebase.json"), "utf8")) as {
  emulators: Record<"auth" | "firestore" | "storage" | "functions", { host: string; port: number }>;
};
const emulators = firebaseJson.emulators;

export const HOST = emulators.firestore.host;
export const LOCAL_PROJECT_ID = (JSON.parse(readFileSync(path.join(ROOT, ".firebaserc"), "utf8")) as { projects: { default: string } }).projects.default;
export const LOCAL_PORTS = { api: emulators.functions.port, firestore: emulators.firestore.port, auth: emulators.auth.port, storage: emulators.storage.port };

/**
 * Where `npm start` runs its local Stripe-compatible server when the port is free (stripe-mock's
 * well-known port), so the operator CLI's `--emulators` finds it for refunds; a second stack's
 * takes another port and prints it.
 */
export const LOCAL_STRIPE_PORT = 12111;

/**
 * Where `npm start` runs its local DNS server (§22's domain verification; DNS_RESOLVERS) when the
 * port is free, so the operator CLI's `--emulators` finds it; a second stack's takes another port.
 */
export const LOCAL_DNS_PORT = 8053;

/** The Admin SDK's host variables for emulators on these ports. */
export function emulatorHostEnv(ports: { firestore: number; auth: number; storage: number }) {
  return {
    FIRESTORE_EMULATOR_HOST: `${HOST}:${ports.firestore}`,
    FIREBASE_AUTH_EMULATOR_HOST: `${HOST}:${ports.auth}`,
    STORAGE_EMULATOR_HOST: `http://${HOST}:${ports.storage}`,
    FIREBASE_STORAGE_EMULATOR_HOST: `${HOST}:${ports.storage}`,
    METADATA_SERVER_DETECTION: "none",
  };
}

/** Ports another program holds: one line each, saying what to do. */
export class PortsTakenError extends Error {
  constructor(readonly lines: string[]) {
    super(lines.join("\n"));
  }
}


export interface PortUse {
  port: number;
  /** What would listen there, e.g. "the Auth emulator". */
  what: string;
  /** The setting that points the stack at an emulator already running there instead, e.g. "FIRESTORE_EMULATOR_HOST=127.0.0.1:8080". */
  useExisting?: string;
}

/** How to run beside whatever holds the ports: a second stack on ports of its own. */
export const OTHER_PORTS_HINT =
  "To run beside it instead: npm start -- --ports <api>,<firestore>,<auth>,<storage> --data-dir <folder>, e.g. --ports 5101,8180,9199,9299 --data-dir .local/second.";

/** Refuses to start anything while one of the ports is held by another program. */
export async function assertPortsFree(uses: PortUse[]): Promise<void> {
  const taken = (await Promise.all(uses.map(async (use) => ((await isPortFree(use.port)) ? null : use)))).filter(
    (use): use is PortUse => use !== null,
  );
  if (taken.length === 0) return;
  throw new PortsTakenError([
    ...taken.map(
      ({ port, what, useExisting }) =>
        `Port ${port} (${what}) on ${HOST} is in use by another program (another \`npm start\`?): stop it` +
        (useExisting ? `, or set ${useExisting} to use the emulator that is there.` : "."),
    ),
    OTHER_PORTS_HINT,
  ]);
}

function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen(port, HOST, () => probe.close(() => resolve(true)));
  });
}


/**
 * Ports below the kernel's ephemeral range (Linux: 32768–60999). A port the kernel picks for
 * `listen(0)` comes from that range, where any outgoing connection may take it as its local port
 * between this probe and the emulator's own bind ("port taken": the test run's thousands of
 * connections to the emulators made that happen).
 */
const FREE_PORT_RANGE = { from: 20_000, to: 32_000 };
const handedOut = new Set<number>();

/** A TCP port free on 127.0.0.1 right now, never handed out before by this process, for emulators that must not collide with others. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const port = FREE_PORT_RANGE.from + Math.floor(Math.random() * (FREE_PORT_RANGE.to - FREE_PORT_RANGE.from));
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    if (await isPortFree(port)) return port;
  }
  throw new Error(`No free TCP port between ${FREE_PORT_RANGE.from} and ${FREE_PORT_RANGE.to} on ${HOST}.`);
}
