/**
 * Admin SDK access for code that runs outside Cloud Functions: the dev server, the tests and the
 * operator tools. They reach firebase-admin through this module so that there is one copy of it.
 */
import { createServer, type RequestListener, type Server } from "node:http";
import { applicationDefault, cert, deleteApp, initializeApp, type App, type ServiceAccount } from "firebase-admin/app";
import { getAuth } from "firebase-admin/auth";
import { getFirestore } from "firebase-admin/firestore";
import { getStorage } from "firebase-admin/storage";
import { loadConfig, type Config } from "./config";
import { answerClientError } from "./core/error-handler";
import type { Logger } from "./core/logger";
import { bucketStore } from "./core/storage";
import { buildDeps, type Deps, type OperatorDeps } from "./deps";

export type { ServiceAccount };

/**
 * Dependencies of the app with a service-account credential, so that V4 URLs can be signed
 * without the metadata server.
 */
export async function localDeps(options: {
  serviceAccount: ServiceAccount;
  env: Record<string, string | undefined>;
  logger: Logger;
  appName: string;
}): Promise<Deps> {
  const config: Config = loadConfig(options.env);
  const app = initializeApp(
    {
      credential: cert(options.serviceAccount),
      projectId: config.projectId,
      storageBucket: config.storageBucket,
    },
    options.appName,
  );
  return buildDeps(app, config, options.logger);
}

/** What the operator tools use: the operations' dependencies on one project, and a way to let go of it. */
export interface AdminContext extends OperatorDeps {
  projectId: string;
  close(): Promise<void>;
}

/**
 * The Admin SDK on a project: with Application Default Credentials, or with none when the
 * emulator host variables point it at emulators (they need none).
 */
export function adminContext(options: {
  /** The operator, as the audit log names them. */
  actor: string;
  projectId: string;
  storageBucket: string;
  credentials: "application-default" | "none";
  appName: string;
  /** A Firestore database other than the project's default (a restored backup, in a restore drill). */
  databaseId?: string;
}): AdminContext {
  const app: App = initializeApp(
    {
      projectId: options.projectId,
      storageBucket: options.storageBucket,
      ...(options.credentials === "application-default" ? { credential: applicationDefault() } : {}),
    },
    options.appName,
  );
  const clock = () => new Date();
  return {
    projectId: options.projectId,
    db: options.databaseId ? getFirestore(app, options.databaseId) : getFirestore(app),
    auth: getAuth(app),
    store: bucketStore(getStorage(app).bucket(options.storageBucket), clock),
    clock,
    actor: { kind: "operator", id: options.actor },
    close: () => deleteApp(app),
  };
}

/**
 * The HTTP server of local runs. Requests Node's parser refuses are answered with a problem
 * (`clientError`), and a missing Host is left to the app to refuse, for the same reason; in Cloud
 * Functions the platform's own front end answers such requests before they reach an instance.
 */
export function localServer(handler: RequestListener): Server {
  return createServer({ requireHostHeader: false }, handler).on("clientError", answerClientError);
}
