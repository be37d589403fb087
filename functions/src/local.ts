import { cert, initializeApp, type ServiceAccount } from "firebase-admin/app";

export type { ServiceAccount };
export { Timestamp } from "firebase-admin/firestore";
import { loadConfig, type Config } from "./config";
import { buildDeps, type Deps } from "./deps";
import type { Logger } from "./core/logger";

/**
 * Dependencies for runs outside Cloud Functions (the dev server, tests, tools): an Admin SDK app
 * with a service-account credential, so that V4 URLs can be signed without the metadata server.
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
