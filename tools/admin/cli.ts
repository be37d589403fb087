import { userInfo } from "node:os";
import type { Command } from "commander";
import { dnsResolvers, stripeSettings } from "../../functions/src/config";
import type { Logger } from "../../functions/src/core/logger";
import { adminContext, type AdminContext } from "../../functions/src/local";
import { emulatorHostEnv, HOST, LOCAL_DNS_PORT, LOCAL_PORTS, LOCAL_PROJECT_ID, LOCAL_STRIPE_PORT } from "../local-stack/addresses";
import { printResult } from "./output";

/**
 * What every command group of the operator CLI shares: the target (emulators or a project), how
 * an operation's answer is printed, and the settings a few operations need beyond the database.
 */

export interface Io {
  stdout: { write(text: string): unknown; isTTY?: boolean };
  stderr: { write(text: string): unknown; isTTY?: boolean };
  env: Record<string, string | undefined>;
}

/** Emulator addresses and project of the local stack (firebase.json). */
export const LOCAL = { projectId: LOCAL_PROJECT_ID, ...emulatorHostEnv(LOCAL_PORTS) };

export interface GlobalOptions {
  actor?: string;
  emulators?: boolean;
  project?: string;
  bucket?: string;
  database?: string;
  json?: boolean;
}

/** A command-line problem found before any operation runs (exit code 2). */
export class UsageError extends Error {}

export const oneOf = (values: readonly string[]) => values.join(", ");

/** What a command group's file is given: how to run an operation, and where output goes. */
export interface Cli {
  io: Io;
  /** Runs an operation against the target project and prints what it returns. */
  action: <A extends unknown[]>(run: (ctx: AdminContext, ...args: A) => Promise<unknown>) => (...args: A) => Promise<void>;
  jsonOutput: (command: Command) => boolean;
}

export function commandLine(io: Io): Cli {
  return {
    io,
    action:
      <A extends unknown[]>(run: (ctx: AdminContext, ...args: A) => Promise<unknown>) =>
      async (...args: A) => {
        const command = args.at(-1) as Command;
        const options = command.optsWithGlobals<GlobalOptions>();
        const ctx = openTarget(options, io);
        try {
          printResult(await run(ctx, ...args), { json: options.json ?? false, out: io.stdout });
        } finally {
          await ctx.close();
        }
      },
    jsonOutput: (command: Command) => command.optsWithGlobals<GlobalOptions>().json ?? false,
  };
}

let openCount = 0;

/** Stripe for refunds: STRIPE_SECRET_KEY and STRIPE_API_BASE, else with --emulators the local stack's own Stripe server. */
export function refundStripe(options: GlobalOptions, env: Io["env"]) {
  if (!options.emulators || env.STRIPE_API_BASE) return stripeSettings(env);
  return stripeSettings({ STRIPE_SECRET_KEY: env.STRIPE_SECRET_KEY || "sk_test_local", STRIPE_API_BASE: `http://${HOST}:${LOCAL_STRIPE_PORT}` });
}

/** What a service logs while the CLI runs (e.g. why Stripe refused), on standard error. */
export const stderrLogger = (io: Io): Logger => {
  const line = (message: string, fields?: Record<string, unknown>) => io.stderr.write(`detail: ${message}${fields ? ` ${JSON.stringify(fields)}` : ""}\n`);
  return { info: () => undefined, warn: line, error: line };
};

/** DNS for the domains' checks: DNS_RESOLVERS, else with --emulators the local stack's own DNS server. */
export function domainResolvers(options: GlobalOptions, env: Io["env"]): string[] {
  return dnsResolvers(env.DNS_RESOLVERS ?? (options.emulators ? `${HOST}:${LOCAL_DNS_PORT}` : undefined));
}

/** The emulators when asked or when their host variables are set, else a real project. */
function openTarget(options: GlobalOptions, io: Io): AdminContext {
  const env = io.env;
  const hostsSet = Boolean(env.FIRESTORE_EMULATOR_HOST || env.FIREBASE_AUTH_EMULATOR_HOST || env.STORAGE_EMULATOR_HOST);
  if (options.emulators) {
    for (const name of ["FIRESTORE_EMULATOR_HOST", "FIREBASE_AUTH_EMULATOR_HOST", "STORAGE_EMULATOR_HOST"] as const) {
      process.env[name] = env[name] ?? LOCAL[name];
    }
  }
  const emulated = options.emulators || hostsSet;
  // Emulators need no credentials; without this the SDK probes the GCE metadata server.
  if (emulated) process.env.METADATA_SERVER_DETECTION ??= "none";
  const projectId = options.project ?? (options.emulators ? LOCAL.projectId : (env.GCLOUD_PROJECT ?? (emulated ? LOCAL.projectId : undefined)));
  if (!projectId) throw new UsageError("Pass --project <id> (with Application Default Credentials), or --emulators.");
  openCount += 1;
  return adminContext({
    actor: options.actor ?? env.MARKETPLACE_OPERATOR ?? userInfo().username,
    projectId,
    storageBucket: options.bucket ?? env.STORAGE_BUCKET ?? `${projectId}.appspot.com`,
    credentials: emulated ? "none" : "application-default",
    appName: `admin-${openCount}`,
    databaseId: options.database,
  });
}

