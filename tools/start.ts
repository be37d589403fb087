/**
 * `npm start`: the API at http://127.0.0.1:5001/api/v1 on local emulators with demo data.
 * `npm run emulators`: the same emulators and data, without the API (`--no-api`).
 */
import path from "node:path";
import type { Server } from "node:http";
import { createApp, API_PREFIX } from "../functions/src/app";
import type { Logger } from "../functions/src/core/logger";
import { adminContext, localDeps } from "../functions/src/local";
import { ensureLocalSecrets } from "./local-keys";
import { MissingFirestoreEmulatorError, startLocalStack, type LocalStack } from "./local-stack";
import { DEMO_PASSWORD, DEMO_USERS, seedDemoData } from "./seed";

const PROJECT_ID = "demo-marketplace";
const BUCKET = "demo-marketplace.appspot.com";
const API_PORT = 5001;
const HOST = "127.0.0.1";

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

async function main(): Promise<void> {
  const withApi = !process.argv.includes("--no-api");
  const started = Date.now();
  let stack: LocalStack | undefined;
  let server: Server | undefined;
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    console.log("\nStopping…");
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    await stack?.stop();
    process.exit(code);
  };
  process.on("SIGINT", () => void stop(0));
  process.on("SIGTERM", () => void stop(0));

  try {
    stack = await startLocalStack({
      projectId: PROJECT_ID,
      ports: { firestore: 8080, auth: 9099, storage: 9199 },
      log: (text) => console.log(`  ${text}`),
    });
    const secrets = await ensureLocalSecrets(path.join(__dirname, "..", ".local"), PROJECT_ID);
    const env = {
      ...process.env,
      ...stack.env,
      GCLOUD_PROJECT: PROJECT_ID,
      STORAGE_BUCKET: BUCKET,
      MODULE_SIGNING_KEYS: process.env.MODULE_SIGNING_KEYS ?? secrets.moduleSigningKeys,
    };
    Object.assign(process.env, stack.env, { GCLOUD_PROJECT: PROJECT_ID });
    const deps = await localDeps({ serviceAccount: secrets.serviceAccount, env, logger: consoleLogger, appName: "dev" });
    const admin = adminContext({ projectId: PROJECT_ID, storageBucket: BUCKET, credentials: "none", appName: "seed" });
    await seedDemoData(deps, admin);
    await admin.close();
    if (withApi) {
      const app = createApp(deps);
      server = await new Promise<Server>((resolve, reject) => {
        const listening = app.listen(API_PORT, HOST, () => resolve(listening));
        listening.on("error", reject);
      });
    }
    printBanner(withApi, stack.env, (Date.now() - started) / 1000);
  } catch (error) {
    console.error(error instanceof MissingFirestoreEmulatorError ? `\n${error.message}\n` : error);
    await stop(1);
  }
}

function printBanner(withApi: boolean, env: Record<string, string>, seconds: number): void {
  const base = `http://${HOST}:${API_PORT}${API_PREFIX}`;
  const authHost = env.FIREBASE_AUTH_EMULATOR_HOST;
  const users = DEMO_USERS.map((user) => `    ${user.email.padEnd(20)} ${DEMO_PASSWORD}   (${user.note})`).join("\n");
  console.log(`
Ready in ${seconds.toFixed(1)} s.${withApi ? `  API: ${base}` : ""}

  Emulators (project ${PROJECT_ID}, bucket ${BUCKET}):
    export FIRESTORE_EMULATOR_HOST=${env.FIRESTORE_EMULATOR_HOST}
    export FIREBASE_AUTH_EMULATOR_HOST=${authHost}
    export STORAGE_EMULATOR_HOST=${env.STORAGE_EMULATOR_HOST}

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
`
    : ""
}
Ctrl-C stops everything.`);
}

void main();
