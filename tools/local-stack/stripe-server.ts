import { createHmac, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import qs from "qs";

/**
 * A small server that speaks the part of Stripe's HTTP API self-serve billing uses (§17), for the
 * tests and `npm start`, where Stripe cannot be reached: the API reaches it through
 * STRIPE_API_BASE only. It answers as Stripe does (form-encoded requests, JSON objects, Stripe's
 * error shape), records every request as the stripe library sent it, and serves the pages its
 * URLs point to: a checkout page that shows what was asked for and, when paid, sends the
 * API the signed `customer.subscription.created` event Stripe would, then returns to success_url.
 */

export interface StripeRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  idempotencyKey: string | undefined;
  params: Record<string, unknown>;
}

export interface LocalPrice {
  id: string;
  lookupKey: string;
  /** The price's `entitlements` metadata (§11). */
  entitlements: string;
}

export interface LocalStripe {
  url: string;
  requests: StripeRequest[];
  /** The next `count` API calls fail: with a Stripe API error of `status`, or by closing the connection. */
  failNext(count: number, how: { status: number } | "disconnect"): void;
  stop(): Promise<void>;
}

const id = (prefix: string) => `${prefix}_${randomBytes(12).toString("hex")}`;

export async function startLocalStripe(options: {
  port?: number;
  prices: LocalPrice[];
  /** Where paid checkouts send their event, and the secret that signs it (STRIPE_WEBHOOK_SECRET). */
  webhook?: { url: string; secret: string };
}): Promise<LocalStripe> {
  const requests: StripeRequest[] = [];
  const sessions = new Map<string, Record<string, unknown>>();
  let failures: { count: number; how: { status: number } | "disconnect" } = { count: 0, how: "disconnect" };
  let base = "";

  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "Content-Type": "application/json", "Request-Id": id("req") }).end(JSON.stringify(body));
  };
  const stripeError = (res: ServerResponse, status: number, message: string, type = "invalid_request_error") => json(res, status, { error: { type, message } });

  async function api(req: IncomingMessage, res: ServerResponse, url: URL) {
    const body = await readBody(req);
    const params = (req.method === "GET" ? qs.parse(url.search.slice(1)) : qs.parse(body)) as Record<string, unknown>;
    requests.push({ method: req.method!, path: url.pathname, authorization: req.headers.authorization, idempotencyKey: req.headers["idempotency-key"] as string | undefined, params });
    if (failures.count > 0) {
      failures.count -= 1;
      if (failures.how === "disconnect") return req.socket.destroy();
      return stripeError(res, failures.how.status, "Something went wrong on Stripe's end.", "api_error");
    }
    if (!/^Bearer sk_(test|live)_\w+$/.test(req.headers.authorization ?? "")) return stripeError(res, 401, "Invalid API Key provided.");
    if (req.method === "GET" && url.pathname === "/v1/prices") {
      const keys = ([] as unknown[]).concat(params.lookup_keys ?? []);
      const data = options.prices.filter((price) => keys.includes(price.lookupKey)).map(priceObject);
      return json(res, 200, { object: "list", data, has_more: false, url: "/v1/prices" });
    }
    if (req.method === "POST" && url.pathname === "/v1/checkout/sessions") {
      const lineItems = params.line_items as { price?: string; quantity?: string }[] | undefined;
      const price = options.prices.find((candidate) => candidate.id === lineItems?.[0]?.price);
      if (!price) return stripeError(res, 400, `No such price: '${lineItems?.[0]?.price}'`);
      if (params.mode !== "subscription" || !params.success_url) return stripeError(res, 400, "mode=subscription and success_url are required.");
      const session = { id: id("cs_test"), object: "checkout.session", ...params, url: "" };
      session.url = `${base}/checkout/${session.id}`;
      sessions.set(session.id, session);
      return json(res, 200, session);
    }
    if (req.method === "POST" && url.pathname === "/v1/billing_portal/sessions") {
      if (typeof params.customer !== "string") return stripeError(res, 400, "Missing required param: customer.");
      const session = { id: id("bps"), object: "billing_portal.session", ...params, url: "" };
      session.url = `${base}/portal/${session.id}`;
      sessions.set(session.id, session);
      return json(res, 200, session);
    }
    return stripeError(res, 404, `Unrecognized request URL (${req.method}: ${url.pathname}).`);
  }

  /** The checkout and portal pages, and paying: what a browser sees at the URLs the sessions carry. */
  async function pages(req: IncomingMessage, res: ServerResponse, url: URL) {
    const [, kind, sessionId, action] = url.pathname.split("/");
    const session = sessions.get(sessionId ?? "");
    if (!session || (kind !== "checkout" && kind !== "portal")) {
      res.writeHead(404, { "Content-Type": "text/plain" }).end("No such session.\n");
      return;
    }
    if (kind === "checkout" && req.method === "POST" && action === "pay") {
      const quantity = Number(qs.parse(await readBody(req)).quantity ?? (session.line_items as { quantity: string }[])[0].quantity);
      await sendSubscriptionCreated(session, quantity);
      res.writeHead(303, { Location: String(session.success_url) }).end();
      return;
    }
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8", "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; form-action *" });
    res.end(kind === "checkout" ? checkoutPage(session) : portalPage(session));
  }

  async function sendSubscriptionCreated(session: Record<string, unknown>, quantity: number) {
    if (!options.webhook) return;
    const lineItem = (session.line_items as { price: string }[])[0];
    const price = options.prices.find((candidate) => candidate.id === lineItem.price)!;
    const customer = typeof session.customer === "string" ? session.customer : id("cus");
    const now = Math.floor(Date.now() / 1000);
    const periodEnd = now + 30 * 24 * 3600;
    const subscription = {
      id: id("sub"),
      object: "subscription",
      status: "active",
      customer,
      metadata: (session.subscription_data as { metadata?: Record<string, string> } | undefined)?.metadata ?? {},
      cancel_at_period_end: false,
      items: { object: "list", data: [{ id: id("si"), price: priceObject(price), quantity, current_period_end: periodEnd }] },
    };
    const event = { id: id("evt"), object: "event", type: "customer.subscription.created", created: now, data: { object: subscription } };
    const payload = JSON.stringify(event);
    const signature = createHmac("sha256", options.webhook.secret).update(`${now}.${payload}`).digest("hex");
    const answer = await fetch(options.webhook.url, { method: "POST", headers: { "Content-Type": "application/json", "Stripe-Signature": `t=${now},v1=${signature}` }, body: payload });
    if (!answer.ok) throw new Error(`the webhook answered ${answer.status}: ${await answer.text()}`);
  }

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const handle = url.pathname.startsWith("/v1/") ? api(req, res, url) : pages(req, res, url);
    handle.catch((error: Error) => {
      if (!res.headersSent) res.writeHead(500, { "Content-Type": "text/plain" }).end(`local Stripe: ${error.message}\n`);
    });
  });
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(options.port ?? 0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    requests,
    failNext: (count, how) => (failures = { count, how }),
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function priceObject(price: LocalPrice) {
  return { id: price.id, object: "price", active: true, lookup_key: price.lookupKey, metadata: { entitlements: price.entitlements }, recurring: { interval: "month" } };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk)).on("end", () => resolve(Buffer.concat(chunks).toString("utf8"))).on("error", reject);
  });
}

const escape = (value: unknown) => String(value).replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

function checkoutPage(session: Record<string, unknown>): string {
  const [item] = session.line_items as { price: string; quantity: string; adjustable_quantity?: { minimum?: string; maximum?: string } }[];
  const metadata = (session.subscription_data as { metadata?: Record<string, string> } | undefined)?.metadata ?? {};
  const who = typeof session.customer === "string" ? `customer ${session.customer}` : `new customer ${session.customer_email ?? ""}`;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>Checkout (local Stripe)</title>
<style>body{font:16px system-ui;max-width:32rem;margin:2rem auto;padding:0 1rem}dt{font-weight:600}button{font:inherit;padding:.5rem 1rem}</style></head>
<body><main><h1>Checkout (local Stripe)</h1><p>What the Marketplace API sent to Stripe:</p>
<dl><dt>Price</dt><dd>${escape(item.price)}</dd><dt>Business</dt><dd>${escape(metadata.businessId ?? "?")}</dd><dt>Billed to</dt><dd>${escape(who)}</dd></dl>
<form method="post" action="/checkout/${escape(session.id)}/pay"><label>Seats <input name="quantity" type="number" value="${escape(item.quantity)}" min="${escape(item.adjustable_quantity?.minimum ?? 1)}" max="${escape(item.adjustable_quantity?.maximum ?? 10000)}"></label>
<p><button type="submit">Pay</button> <a href="${escape(session.cancel_url)}">Cancel</a></p></form></main></body></html>`;
}

function portalPage(session: Record<string, unknown>): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Billing portal (local Stripe)</title></head>
<body><main><h1>Billing portal (local Stripe)</h1><p>Customer ${escape(session.customer)}.</p><p><a href="${escape(session.return_url)}">Return to the Marketplace</a></p></main></body></html>`;
}
