import { initializeApp } from "firebase-admin/app";
import { onRequest } from "firebase-functions/v2/https";
import type { Express } from "express";
import { createApp } from "./app";
import { loadConfig, params } from "./config";
import { cloudLogger } from "./core/logger";
import { buildDeps } from "./deps";

let app: Promise<Express> | undefined;

/** Built on the first request, when params and secrets are readable; kept for the instance's life. */
function productionApp(): Promise<Express> {
  app ??= (async () => {
    const config = loadConfig();
    return createApp(await buildDeps(initializeApp(), config, cloudLogger));
  })();
  return app;
}

export const api = onRequest(
  {
    region: "us-central1",
    memory: "512MiB",
    timeoutSeconds: 120,
    concurrency: 80,
    secrets: [params.moduleSigningKeys],
    invoker: "public",
  },
  async (req, res) => {
    const handler = await productionApp();
    handler(req, res);
  },
);
