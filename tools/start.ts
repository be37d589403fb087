/**
 * `npm start`: the API at http://127.0.0.1:5001/api/v1 and the Hosting site (built from
 * packages/web, tools/build-site.ts) at http://127.0.0.1:5001/ on local emulators with demo data. Data is kept in .local/emulator-data
 * across restarts (`npm start -- --fresh` starts empty).
 * `npm run emulators`: the same emulators and data, without the API (`--no-api`).
 *
 * Every taken port is named before anything starts; SIGINT, SIGTERM or SIGHUP, the death of the
 * process that started it (npm) or of an emulator stops all of it.
 */
import type { RequestListener, Server } from "node:http";
import path from "node:path";
import { createApp, API_PREFIX } from "../functions/src/app";
import { LOCAL_STRIPE_CONNECT_WEBHOOK_SECRET, LOCAL_STRIPE_WEBHOOK_SECRET } from "../functions/src/config";
import type { Logger } from "../functions/src/core/logger";
import { localDeps, localServer } from "../functions/src/local";
import { runDeployedFunctions, type DeployedFunctions } from "../functions/src/local-functions";
import { initializeRepository } from "../functions/src/tuf/initialize";
import { readTufKeyFolder } from "./tuf-keys";
import { localSite } from "../functions/src/local-site";
import { drainDownloadCounters } from "../functions/src/marketplace/download-counter";
import { buildSite, HOSTING_DIR } from "./build-site";
import { ensureFunctionsLocalFiles, functionsApiBase, startFunctionsEmulator } from "./functions-emulator";
import { ensureLocalSecrets } from "./local-keys";
import { assertPortsFree, MissingFirestoreEmulatorError, PortsTakenError, startLocalStack, type LocalStack, type PortUse } from "./local-stack";
import { HOST, LOCAL_DNS_PORT, LOCAL_PORTS, LOCAL_PROJECT_ID, LOCAL_STRIPE_PORT, OTHER_PORTS_HINT } from "./local-stack/addresses";
import { startLocalStripe, type LocalStripe } from "./local-stack/stripe-server";
import { startLocalDns, type LocalDns } from "./local-stack/dns-server";
import { LOCAL_DNS_RECORDS } from "./local-stack/dns-records";
import { DEMO_PASSWORD, DEMO_USERS, seedDemoData } from "./seed";


const LOCAL_BUCKET = `${LOCAL_PROJECT_ID}.appspot.com`;
type Ports = typeof LOCAL_PORTS;
const ROOT = path.join(__dirname, "..");
const LOCAL_DIR = path.join(ROOT, ".local");

interface StartOptions {
  withApi: boolean;
  /** Serve the compiled function through the Functions emulator instead of the app in this process. */
  functions: boolean;
  fresh: boolean;
  ports: Ports;
  dataDir: string;
}

/**
 * `--no-api`, `--fresh`, and for a second stack beside the first: `--ports <api>,<firestore>,<auth>,<storage>`
 * and `--data-dir <folder>` (default .local/emulator-data).
 */
function parseOptions(argv: string[]): StartOptions {
  const valueOf = (flag: string) => {
    const index = argv.indexOf(flag);
    return index === -1 ? undefined : argv[index + 1];
  };
  const portList = valueOf("--ports");
  const ports = portList?.split(",").map(Number);
  if (portList !== undefined && (ports?.length !== 4 || !ports.every((port) => Number.isInteger(port) && port > 0 && port < 65536))) {
    throw new UsageError("--ports takes four port numbers: <api>,<firestore>,<auth>,<storage>.");
  }
  return {
    withApi: !argv.includes("--no-api"),
    functions: argv.includes("--functions"),
    fresh: argv.includes("--fresh"),
    ports: ports ? { api: ports[0], firestore: ports[1], auth: ports[2], storage: ports[3] } : LOCAL_PORTS,
    dataDir: path.resolve(valueOf("--data-dir") ?? path.join(LOCAL_DIR, "emulator-data")),
  };
}

class UsageError extends Error {}

const consoleLogger: Logger = {
  info: (message, fields) => console.log(line("INFO", message, fields)),
  warn: (message, fields) => console.warn(line("WARN", message, fields)),
  error: (message, fields) => console.error(line("ERROR", message, fields)),
};

function line(level: string, message: string, fields: Record<string, unknown> = {}): string {
  const time = new Date().toISOString().slice(11, 23);
  if (message === "request") {
    const { method, path: urlPath, status, durationMs, uid, requestId } = fields;
    return `${time} ${level} ${method} ${urlPath} ${status} ${durationMs}ms${uid ? ` uid=${uid}` : ""} id=${requestId}`;
  }
  return `${time} ${level} ${message} ${JSON.stringify(fields)}`;
}

/** The ports `npm start` will listen on: the API's, and those of the emulators it starts itself. */
function portUses({ withApi, functions, ports }: StartOptions): PortUse[] {
  const env = process.env;
  return [
    ...(withApi ? [{ port: ports.api, what: functions ? "the Functions emulator" : "the API and Hosting" }] : []),
    ...(env.FIRESTORE_EMULATOR_HOST ? [] : [{ port: ports.firestore, what: "the Firestore emulator", useExisting: `FIRESTORE_EMULATOR_HOST=${HOST}:${ports.firestore}` }]),
    ...(env.FIREBASE_AUTH_EMULATOR_HOST ? [] : [{ port: ports.auth, what: "the Auth emulator", useExisting: `FIREBASE_AUTH_EMULATOR_HOST=${HOST}:${ports.auth}` }]),
    ...(env.STORAGE_EMULATOR_HOST || env.FIREBASE_STORAGE_EMULATOR_HOST
      ? []
      : [{ port: ports.storage, what: "the Storage emulator", useExisting: `STORAGE_EMULATOR_HOST=http://${HOST}:${ports.storage}` }]),
  ];
}

async function main(): Promise<void> {
  let options: StartOptions;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    console.error(`error: ${(error as Error).message}`);
    process.exit(2);
  }
  const { withApi, ports, dataDir } = options;
  const started = Date.now();
  let stack: LocalStack | undefined;
  let server: Server | undefined;
  let stopFunctions: (() => Promise<void>) | undefined;
  let localStripe: LocalStripe | undefined;
  let localDns: LocalDns | undefined;
  let deployedFunctions: DeployedFunctions | undefined;
  let ready = false;
  let stopping = false;

  const stop = async (code: number, reason?: string) => {
    if (stopping) return;
    stopping = true;
    if (reason) console.error(reason);
    console.log("Stopping…");
    // Each step is bounded: with an emulator gone, a step waiting on it would otherwise wait for
    // the client library's retries, and the stack would never stop.
    await within(5_000, "the API's open connections", new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined))));
    await within(10_000, "the download counters", drainDownloadCounters());
    await within(10_000, "the background functions", deployedFunctions?.stop());
    await within(10_000, "the Functions emulator", stopFunctions?.());
    await within(5_000, "the local Stripe", localStripe?.stop());
    await within(5_000, "the local DNS", localDns?.stop());
    // Only data of a stack that came up whole replaces what was kept.
    if (ready && stack) {
      await stack.exportData().then(
        ({ complete }) =>
          console.log(
            complete
              ? `Data kept in ${path.relative(process.cwd(), dataDir)}`
              : `Data kept in ${path.relative(process.cwd(), dataDir)}, but for what could not be exported (above): that part is the previous stop's`,
          ),
        (error: Error) => console.error(`Could not keep the data: ${error.message}`),
      );
    }
    await stack?.stop();
    process.exit(code);
  };
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => void stop(0));
  // npm does not pass a SIGTERM on through its shell to us; when it goes, we go.
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) void stop(0);
  }, 500).unref();
  // An in-process emulator that loses a race for its port throws from an event handler.
  process.on("uncaughtException", (error: NodeJS.ErrnoException) => {
    const reason =
      error.code === "EADDRINUSE"
        ? `Port ${(error as { port?: number }).port ?? "?"} on ${HOST} is in use by another program (another \`npm start\`?): stop it and start again. ${OTHER_PORTS_HINT}`
        : (error.stack ?? String(error));
    void stop(1, reason);
  });

  try {
    await assertPortsFree(portUses(options));
    // The pages are built from the repository each time (about two seconds), so they never lag behind it.
    const hostingDir = withApi && !options.functions ? buildSite(HOSTING_DIR) : null;
    stack = await startLocalStack({
      projectId: LOCAL_PROJECT_ID,
      ports,
      log: (text) => console.log(`  ${text}`),
      dataDir,
      fresh: options.fresh,
    });
    void stack.exited.then((what) => stop(1, `${what} Stopping everything.`));
    const secrets = await ensureLocalSecrets(LOCAL_DIR, LOCAL_PROJECT_ID);
    const env = {
      ...process.env,
      ...stack.env,
      GCLOUD_PROJECT: LOCAL_PROJECT_ID,
      STORAGE_BUCKET: LOCAL_BUCKET,
      // No proxy is in front locally: the client address is the connection's, X-Forwarded-For is the caller's word.
      TRUST_PROXY_HOPS: process.env.TRUST_PROXY_HOPS ?? "0",
      MODULE_SIGNING_KEYS: process.env.MODULE_SIGNING_KEYS ?? secrets.moduleSigningKeys,
      TUF_ONLINE_KEY: process.env.TUF_ONLINE_KEY ?? secrets.tufOnlineKey,
      // Feeds link to this stack's own address (a second stack on other ports has its own).
      PUBLIC_BASE_URL: process.env.PUBLIC_BASE_URL ?? `http://${HOST}:${ports.api}${API_PREFIX}`,
      // The demo plan `team` (§17) is Stripe's price with the lookup key `team`, whichever Stripe answers.
      BILLING_PLANS: process.env.BILLING_PLANS || "team=team",
    };
    if (withApi && !options.functions && !process.env.STRIPE_API_BASE) {
      // Self-serve billing (§17) against a local Stripe-compatible server, whatever key is set
      // (it takes any): its checkout page's "Pay" sends this API the signed subscription event
      // Stripe would. STRIPE_API_BASE=https://api.stripe.com (and a test key) uses Stripe itself.
      const stripeOptions = {
        prices: [{ id: "price_team", lookupKey: "team", entitlements: "pro" }],
        webhook: { url: `${env.PUBLIC_BASE_URL}/billing/stripe/webhook`, ...localStripeSecrets() },
      };
      localStripe = await startLocalStripe({ ...stripeOptions, port: LOCAL_STRIPE_PORT }).catch(() => startLocalStripe(stripeOptions));
      Object.assign(env, { STRIPE_SECRET_KEY: process.env.STRIPE_SECRET_KEY || "sk_test_local", STRIPE_API_BASE: localStripe.url });
    }
    if (!process.env.DNS_RESOLVERS) {
      // The "company DNS" of §22's domain verification: records from `npm run dns`, every other
      // name (webhook hosts) from this machine's resolver. DNS_RESOLVERS set: those servers instead.
      const dnsOptions = { recordsFile: LOCAL_DNS_RECORDS, forward: true };
      localDns = await startLocalDns({ ...dnsOptions, port: LOCAL_DNS_PORT }).catch(() => startLocalDns(dnsOptions));
      Object.assign(env, { DNS_RESOLVERS: localDns.address });
    }
    // The deployed functions run here (webhooks, the TUF repository) read their configuration from
    // the environment, as deployed: the same as the API's.
    Object.assign(process.env, env);
    const deps = await localDeps({ serviceAccount: secrets.serviceAccount, env, logger: consoleLogger, appName: "dev" });
    await seedDemoData(deps);
    // The TUF repository (§23) of this data, made with the local keys on first start.
    const offline = readTufKeyFolder(secrets.tufOfflineDir);
    if (await initializeRepository(deps, { root: offline.root, targets: offline.targets!, online: deps.tufOnlineSigners[0] })) {
      console.log(`  TUF repository initialised (offline keys in ${path.relative(ROOT, secrets.tufOfflineDir)})`);
    }
    let apiBase = `http://${HOST}:${ports.api}${API_PREFIX}`;
    if (withApi && options.functions) {
      const localFiles = ensureFunctionsLocalFiles(secrets.moduleSigningKeys, LOCAL_BUCKET);
      localFiles.created.forEach((file) => console.log(`  Wrote ${path.relative(ROOT, file)}`));
      localFiles.completed.forEach((file) => console.log(`  Added the missing local secret to ${path.relative(ROOT, file)}`));
      const emulator = await startFunctionsEmulator({
        projectId: LOCAL_PROJECT_ID,
        port: ports.api,
        emulatorEnv: { ...stack.env, PUBLIC_BASE_URL: process.env.PUBLIC_BASE_URL ?? functionsApiBase(LOCAL_PROJECT_ID, ports.api), ...(localDns ? { DNS_RESOLVERS: localDns.address } : {}) },
        serviceAccount: secrets.serviceAccount,
        workDir: LOCAL_DIR,
        log: (text) => console.log(`  ${text}`),
      });
      stopFunctions = emulator.stop;
      void emulator.exited.then((what) => stop(1, what));
      apiBase = emulator.apiBase;
    } else if (withApi) {
      const site = localSite(createApp(deps), { hostingDir: hostingDir!, projectId: LOCAL_PROJECT_ID, authEmulatorHost: stack.env.FIREBASE_AUTH_EMULATOR_HOST });
      server = await listen(site, ports.api);
    }
    // The background work runs through the deployed functions themselves, their triggers fired
    // from here on each document they act on, their schedules run here (deployed periods in
    // brackets): the TUF repository follows publishes and revocations (§23; tufMaintenance every
    // minute [5 min]), seats follow a changed quantity (§25; seatSweep every minute [1 min]),
    // SCIM directory jobs run (§25; scimDirectorySweep every minute [1 min]), counts are folded
    // (§28; metricFold every 2 s [1 min]), and webhooks go out (§21; webhookSweep every 5 s
    // [1 min]). With --functions the API is the emulator's, and sends no webhooks.
    const sendsWebhooks = withApi && !options.functions;
    deployedFunctions = await runDeployedFunctions(deps.db, {
      triggers: ["tufEvents", "seatBalance", "scimDirectoryJob", ...(sendsWebhooks ? (["webhookEvents"] as const) : [])],
      schedules: { tufMaintenance: 60_000, seatSweep: 60_000, scimDirectorySweep: 60_000, metricFold: 2_000, ...(sendsWebhooks ? { webhookSweep: 5_000 } : {}) },
      warn: deps.logger.warn,
    });
    ready = true;
    printBanner(options, apiBase, stack.env, (Date.now() - started) / 1000, (env as Record<string, string | undefined>).STRIPE_API_BASE, localDns?.address);
  } catch (error) {
    if (error instanceof PortsTakenError) {
      console.error(error.lines.join("\n"));
      process.exit(1);
    }
    await stop(1, error instanceof MissingFirestoreEmulatorError ? `\n${error.message}\n` : String((error as Error).stack ?? error));
  }
}

/** Waits for a step of stopping, at most `ms`: then says which step it left and goes on. */
async function within(ms: number, what: string, step: Promise<unknown> | undefined): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), ms)));
  const outcome = await Promise.race([Promise.resolve(step).then(() => "done" as const, () => "failed" as const), late]);
  clearTimeout(timer);
  if (outcome === "late") console.error(`Stopping: left ${what} after ${ms / 1000} s.`);
}

/** The local Stripe's two endpoint secrets (§11): STRIPE_WEBHOOK_SECRET's first and second entries when set (the first for both when it has one), else the local pair. */
function localStripeSecrets(): { secret: string; connectSecret: string } {
  const [secret, connectSecret] = (process.env.STRIPE_WEBHOOK_SECRET ?? "").split(",").map((entry) => entry.trim()).filter(Boolean);
  if (!secret) return { secret: LOCAL_STRIPE_WEBHOOK_SECRET, connectSecret: LOCAL_STRIPE_CONNECT_WEBHOOK_SECRET };
  return { secret, connectSecret: connectSecret ?? secret };
}

/** Listens, or fails with the reason (Express 5's listen callback is also called on errors). */
function listen(handler: RequestListener, port: number): Promise<Server> {
  const server = localServer(handler);
  return new Promise((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        error.code === "EADDRINUSE"
          ? new Error(`Port ${port} (the API and Hosting) on ${HOST} is in use by another program: stop it and start again. ${OTHER_PORTS_HINT}`)
          : error,
      ),
    );
    server.listen(port, HOST, () => resolve(server));
  });
}

function printBanner({ withApi, functions, ports, dataDir }: StartOptions, base: string, env: Record<string, string>, seconds: number, stripeApiBase: string | undefined, dnsAddress: string | undefined): void {
  const origin = `http://${HOST}:${ports.api}`;
  const authHost = env.FIREBASE_AUTH_EMULATOR_HOST;
  const users = DEMO_USERS.map((user) => `    ${user.email.padEnd(20)} ${DEMO_PASSWORD}   (${user.note})`).join("\n");
  console.log(`
Ready in ${seconds.toFixed(1)} s.${withApi ? `  API: ${base}${functions ? " (the compiled function, in the Functions emulator)" : `\n  Pages: ${origin}/ (marketplace), ${origin}/publisher (portal)   Reference: ${origin}/docs`}` : ""}

  Emulators (project ${LOCAL_PROJECT_ID}, bucket ${LOCAL_BUCKET}):
    export FIRESTORE_EMULATOR_HOST=${env.FIRESTORE_EMULATOR_HOST}
    export FIREBASE_AUTH_EMULATOR_HOST=${authHost}
    export STORAGE_EMULATOR_HOST=${env.STORAGE_EMULATOR_HOST}
  Data is kept in ${path.relative(process.cwd(), dataDir)} when this stops (npm start -- --fresh starts empty).

  Demo accounts (email / password):
${users}

  Get an ID token (Auth emulator, any API key):
    TOKEN=$(curl -s "http://${authHost}/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=local" \\
      -H 'Content-Type: application/json' \\
      -d '{"email":"alice@example.com","password":"${DEMO_PASSWORD}","returnSecureToken":true}' | node -pe 'JSON.parse(require("fs").readFileSync(0)).idToken')
${
  withApi
    ? `
  Try:
    curl -s ${base}/health
    curl -s ${base}/releases
    curl -s -H "Authorization: Bearer $TOKEN" ${base}/users/me
    curl -si ${base}/releases/download/win32

  Publish a module (dana@example.com is a developer): npx mpkg --help; try npx mpkg pack docs/sample-module
  Teams: ${origin}/account (sign in as anyone; create a business, invite, buy seats through a local Stripe)
  Paid modules: ${origin}/publisher as dana@example.com: set up payouts (a local Stripe onboarding page), declare who sells,
    price a module; then buy it as bob@example.com on its page, which shows who sells; refunds: npm run admin -- --emulators purchases list
  Notices (EU DSA): "Report illegal content" on a module's page, no account needed; npm run admin -- --emulators notices list,
    notices decide, appeals decide; the publisher appeals in ${origin}/publisher#decisions; figures: ${origin}/transparency
  Stripe: ${stripeApiBase || "Stripe's own API"}${stripeApiBase && !stripeApiBase.endsWith(`:${LOCAL_STRIPE_PORT}`) ? ` (for the operator CLI's refunds: STRIPE_API_BASE=${stripeApiBase})` : ""}
  DNS: ${dnsAddress ? `${dnsAddress}${dnsAddress.endsWith(`:${LOCAL_DNS_PORT}`) ? "" : ` (for the operator CLI: DNS_RESOLVERS=${dnsAddress})`}, records from npm run dns (e.g. a domain's TXT record: npm run -s dns -- set <txtName> TXT <txtValue>), other names from this machine's` : `DNS_RESOLVERS=${process.env.DNS_RESOLVERS}`}
  Stripe webhook: ${base}/billing/stripe/webhook, secrets ${localStripeSecrets().secret} (platform) and ${localStripeSecrets().connectSecret} (Connect)
    (for \`stripe listen --forward-to\`, start with STRIPE_WEBHOOK_SECRET set to the whsec_… it prints)
`
    : ""
}
Ctrl-C stops everything.`);
}

if (require.main === module) void main();
