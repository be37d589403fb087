import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import qs from "qs";
import { answerApi, stripeError, type ApiAnswer } from "./stripe/api";
import { EventSender, type StripeEvent, type WebhookTarget } from "./stripe/events";
import { id, type LocalPrice } from "./stripe/objects";
import { checkoutPage, onboardingPage, portalPage } from "./stripe/pages";
import { StripeState } from "./stripe/state";

/**
 * A small server that speaks the part of Stripe's HTTP API the service uses, for the tests and
 * `npm start`, where Stripe cannot be reached: the API reaches it through STRIPE_API_BASE only.
 * It answers as Stripe does (form-encoded requests, JSON objects, Stripe's error shape, the same
 * answer again for a repeated Idempotency-Key), records every request as the stripe library sent
 * it, and serves the pages its URLs point to, which send the API the signed events Stripe would:
 * - self-serve plans (§17): a checkout page whose payment sends `customer.subscription.created`;
 * - paid modules (§20): connected accounts and their onboarding page (`account.updated`),
 *   products and prices, one-time checkouts (`checkout.session.completed`; paid by SEPA debit, it
 *   completes unpaid and settles later: `checkout.session.async_payment_succeeded|failed`),
 *   module subscriptions (`customer.subscription.created` and, unless on trial, `invoice.paid`),
 *   which the API reads back (`GET /v1/subscriptions/:id`), renewals (`renew`, or over HTTP
 *   `POST /v1/test_helpers/subscriptions/:id/renew [paid=false | paid_by=credit]`, as a test clock would), subscription
 *   updates (a switch of price by `items[0][price]`) and cancellations, refunds (`charge.refunded`).
 * Its parts, in `stripe/`: the objects, the state and what paying does to it, the API's answers,
 * the events and the pages.
 */

export type { LocalPrice } from "./stripe/objects";

export interface StripeRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  idempotencyKey: string | undefined;
  params: Record<string, unknown>;
}

export interface LocalStripe {
  url: string;
  requests: StripeRequest[];
  /** The events sent to the webhook, in order. */
  events: StripeEvent[];
  /** The next `count` API calls (to `path` only, when given) fail: with a Stripe API error of `status`, or by closing the connection. */
  failNext(count: number, how: { status: number } | "disconnect", path?: string): void;
  /**
   * Ends a module subscription's period as Stripe would: the next invoice is paid (a new period,
   * `invoice.paid`, then `customer.subscription.updated`) or, with `paid: false`, fails (the
   * subscription becomes `past_due`). Answers the invoice.
   */
  renew(subscriptionId: string, options?: { paid?: boolean; byCredit?: boolean }): Promise<Record<string, unknown>>;
  /** A payment as Stripe would hold one, for tests that write its events themselves (the API reads its fee back). */
  recordPayment(paymentIntent: string, amount: number, currency: string, fee: number): void;
  /** Changes a subscription at Stripe without telling the webhook (as when its events are still on their way). */
  setSubscription(subscriptionId: string, change: Record<string, unknown>): Record<string, unknown>;
  /** Keeps the events made from now on from the webhook (as a slow or failing delivery would) until the returned function sends them, in order. */
  holdEvents(): () => Promise<void>;
  stop(): Promise<void>;
}

export async function startLocalStripe(options: {
  port?: number;
  prices: LocalPrice[];
  /** Where the pages send their events, and the secrets that sign them. */
  webhook?: WebhookTarget;
}): Promise<LocalStripe> {
  const requests: StripeRequest[] = [];
  const events = new EventSender(options.webhook);
  const state = new StripeState(options.prices, events);
  const answered = new Map<string, ApiAnswer>();
  let failures: { count: number; how: { status: number } | "disconnect"; path?: string } = { count: 0, how: "disconnect" };

  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "Content-Type": "application/json", "Request-Id": id("req") }).end(JSON.stringify(body));
  };

  async function api(req: IncomingMessage, res: ServerResponse, url: URL) {
    const body = await readBody(req);
    const params = (req.method === "GET" ? qs.parse(url.search.slice(1)) : qs.parse(body)) as Record<string, unknown>;
    const idempotencyKey = req.headers["idempotency-key"] as string | undefined;
    requests.push({ method: req.method!, path: url.pathname, authorization: req.headers.authorization, idempotencyKey, params });
    if (failures.count > 0 && (failures.path === undefined || failures.path === url.pathname)) {
      failures.count -= 1;
      if (failures.how === "disconnect") return req.socket.destroy();
      const failure = stripeError(failures.how.status, "Something went wrong on Stripe's end.", "api_error");
      return json(res, failure.status, failure.body);
    }
    if (!/^Bearer sk_(test|live)_\w+$/.test(req.headers.authorization ?? "")) return json(res, 401, stripeError(401, "Invalid API Key provided.").body);
    const key = idempotencyKey && req.method === "POST" ? `${url.pathname} ${idempotencyKey}` : null;
    const earlier = key ? answered.get(key) : undefined;
    const answer = earlier ?? (await answerApi(state, req.method!, url.pathname, params));
    // Stripe answers a repeated key with the first answer as it was then, not as the object is now.
    if (key && !earlier && answer.status < 500) answered.set(key, structuredClone(answer));
    return json(res, answer.status, answer.body);
  }

  /** The checkout, portal and onboarding pages, and their buttons. */
  async function pages(req: IncomingMessage, res: ServerResponse, url: URL) {
    const [, kind, sessionId, action] = url.pathname.split("/");
    const session = state.sessions.get(sessionId ?? "");
    if (!session || !["checkout", "portal", "onboarding"].includes(kind)) {
      res.writeHead(404, { "Content-Type": "text/plain" }).end("No such session.\n");
      return;
    }
    if (req.method === "POST" && kind === "checkout" && action === "pay") {
      const item = (session.line_items as { quantity: string }[])[0];
      const form = qs.parse(await readBody(req));
      await state.pay(session, Number(form.quantity ?? item.quantity), String(form.method ?? "card"));
      res.writeHead(303, { Location: String(session.success_url) }).end();
      return;
    }
    if (req.method === "POST" && kind === "checkout" && action === "settle" && session.payment_status === "unpaid") {
      await state.settle(session, qs.parse(await readBody(req)).outcome !== "failed");
      res.writeHead(303, { Location: String(session.success_url) }).end();
      return;
    }
    if (req.method === "POST" && kind === "onboarding" && action === "complete") {
      await state.completeOnboarding(String(session.account));
      res.writeHead(303, { Location: String(session.return_url) }).end();
      return;
    }
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8", "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; form-action *" });
    res.end(kind === "checkout" ? checkoutPage(session, state.priceOf(session)) : kind === "portal" ? portalPage(session) : onboardingPage(session, state.accounts.get(String(session.account))!));
  }

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const handled = url.pathname.startsWith("/v1/") ? api(req, res, url) : pages(req, res, url);
    handled.catch((error: Error) => {
      if (!res.headersSent) res.writeHead(500, { "Content-Type": "text/plain" }).end(`local Stripe: ${error.message}\n`);
    });
  });
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(options.port ?? 0, "127.0.0.1", resolve));
  state.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: state.base,
    requests,
    events: events.events,
    failNext: (count, how, path) => (failures = { count, how, path }),
    renew: (subscriptionId, renewal) => state.renew(subscriptionId, renewal),
    recordPayment: (paymentIntent, amount, currency, fee) => state.newPayment(paymentIntent, amount, currency, fee),
    setSubscription: (subscriptionId, change) => Object.assign(state.subscriptions.get(subscriptionId)!, change),
    holdEvents: () => events.hold(),
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk)).on("end", () => resolve(Buffer.concat(chunks).toString("utf8"))).on("error", reject);
  });
}
