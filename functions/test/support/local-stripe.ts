import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Express } from "express";
import { startLocalStripe, type LocalStripe } from "../../../tools/local-stack/stripe-server";
import { LOCAL_STRIPE_CONNECT_WEBHOOK_SECRET, LOCAL_STRIPE_WEBHOOK_SECRET } from "../../src/config";
import { otherInstanceApp, testApp } from "./harness";

export interface AppsWithLocalStripe {
  stripe: LocalStripe;
  /** The app on a port, whose webhook the local Stripe calls. */
  app: Express;
  /** A second instance on the same emulators (§13). */
  other: Express;
  /** The configuration that points an app at the local Stripe (for more apps: another clock, say). */
  stripeConfig(): { billing: { stripeSecretKey: string; apiBase: { protocol: "http"; host: string; port: number }; plans: Map<string, string> }; payments: { feeBasisPoints: number; currencies: string[] } };
}

/**
 * For a describe block: the app listening on a port, the local Stripe-compatible server sending
 * its signed events to the app's webhook as Stripe would, and a second instance; started before
 * the block's tests and stopped after them. Read its fields in the tests (or a `beforeAll` of the
 * block's own), once started.
 */
export function appsWithLocalStripe(): AppsWithLocalStripe {
  let server: Server;
  const apps = {
    stripeConfig: () => ({
      billing: { stripeSecretKey: "sk_test_local", apiBase: { protocol: "http" as const, host: "127.0.0.1", port: Number(new URL(apps.stripe.url).port) }, plans: new Map<string, string>() },
      payments: { feeBasisPoints: 1500, currencies: ["usd", "eur", "gbp"] },
    }),
  } as AppsWithLocalStripe;
  beforeAll(async () => {
    server = createServer((req, res) => apps.app(req, res));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    apps.stripe = await startLocalStripe({ prices: [], webhook: { url: `http://127.0.0.1:${port}/api/v1/billing/stripe/webhook`, secret: LOCAL_STRIPE_WEBHOOK_SECRET, connectSecret: LOCAL_STRIPE_CONNECT_WEBHOOK_SECRET } });
    apps.app = await testApp({ config: apps.stripeConfig() });
    apps.other = await otherInstanceApp({ config: apps.stripeConfig() });
  });
  afterAll(async () => {
    await apps.stripe?.stop();
    await new Promise((resolve) => server?.close(resolve));
  });
  return apps;
}
