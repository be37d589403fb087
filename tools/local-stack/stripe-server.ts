import { createHmac, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import qs from "qs";

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
 *   `POST /v1/test_helpers/subscriptions/:id/renew [paid=false]`, as a test clock would), subscription
 *   updates and cancellations, refunds (`charge.refunded`).
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
  /** The events sent to the webhook, in order. */
  events: { id: string; type: string; data: { object: Record<string, unknown> } }[];
  /** The next `count` API calls (to `path` only, when given) fail: with a Stripe API error of `status`, or by closing the connection. */
  failNext(count: number, how: { status: number } | "disconnect", path?: string): void;
  /**
   * Ends a module subscription's period as Stripe would: the next invoice is paid (a new period,
   * `invoice.paid`, then `customer.subscription.updated`) or, with `paid: false`, fails (the
   * subscription becomes `past_due`). Answers the invoice.
   */
  renew(subscriptionId: string, options?: { paid?: boolean }): Promise<Record<string, unknown>>;
  /** A payment as Stripe would hold one, for tests that write its events themselves (the API reads its fee back). */
  recordPayment(paymentIntent: string, amount: number, currency: string, fee: number): void;
  /** Changes a subscription at Stripe without telling the webhook (as when its events are still on their way). */
  setSubscription(subscriptionId: string, change: Record<string, unknown>): Record<string, unknown>;
  /** Keeps the events made from now on from the webhook (as a slow or failing delivery would) until the returned function sends them, in order. */
  holdEvents(): () => Promise<void>;
  stop(): Promise<void>;
}

type StripeObject = Record<string, unknown> & { id: string };
type Metadata = Record<string, string>;

const id = (prefix: string) => `${prefix}_${randomBytes(12).toString("hex")}`;
const nowSeconds = () => Math.floor(Date.now() / 1000);
const DAY = 24 * 3600;

export async function startLocalStripe(options: {
  port?: number;
  prices: LocalPrice[];
  /**
   * Where the pages send their events, and the secrets that sign them (STRIPE_WEBHOOK_SECRET): as
   * Stripe's two endpoints do, connected accounts' events (those carrying `account`) are signed
   * with the Connect endpoint's own secret, the others with the platform endpoint's.
   */
  webhook?: { url: string; secret: string; connectSecret: string };
}): Promise<LocalStripe> {
  const requests: StripeRequest[] = [];
  const events: LocalStripe["events"] = [];
  const sessions = new Map<string, StripeObject>();
  const accounts = new Map<string, StripeObject>();
  const prices = new Map<string, StripeObject>(options.prices.map((price) => [price.id, planPrice(price)]));
  const subscriptions = new Map<string, StripeObject>();
  /** Payments by payment intent: what was charged, and refunded so far; the application fee taken, and refunded so far. */
  const payments = new Map<string, { charge: string; amount: number; currency: string; refunded: number; fee: number; feeId: string | null; feeRefunded: number }>();
  const newPayment = (paymentIntent: string, amount: number, currency: string, fee: number) =>
    payments.set(paymentIntent, { charge: id("ch"), amount, currency, refunded: 0, fee, feeId: fee > 0 ? id("fee") : null, feeRefunded: 0 });
  const invoices: StripeObject[] = [];
  const answered = new Map<string, { status: number; body: unknown }>();
  let failures: { count: number; how: { status: number } | "disconnect"; path?: string } = { count: 0, how: "disconnect" };
  let base = "";
  let held: (() => Promise<void>)[] | null = null;

  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "Content-Type": "application/json", "Request-Id": id("req") }).end(JSON.stringify(body));
  };
  const stripeError = (status: number, message: string, type = "invalid_request_error") => ({ status, body: { error: { type, message } } });
  const ok = (body: unknown) => ({ status: 200, body });

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
    const answer = earlier ?? (await handle(req.method!, url.pathname, params));
    // Stripe answers a repeated key with the first answer as it was then, not as the object is now.
    if (key && !earlier && answer.status < 500) answered.set(key, structuredClone(answer));
    return json(res, answer.status, answer.body);
  }

  async function handle(method: string, path: string, params: Record<string, unknown>): Promise<{ status: number; body: unknown }> {
    // This stand-in's own test helper (Stripe's test clocks do it by advancing time): the next period of a module subscription, paid or failed.
    const renewal = /^\/v1\/test_helpers\/subscriptions\/(sub_[0-9a-f]+)\/renew$/.exec(path);
    if (method === "POST" && renewal) {
      if (!subscriptions.has(renewal[1])) return stripeError(404, `No such subscription: '${renewal[1]}'`);
      return ok(await renew(renewal[1], { paid: params.paid !== "false" }));
    }
    const route = `${method} ${path.replace(/\/(acct|sub|pi|in|fee)_[0-9a-f]+$/, "/:id")}`;
    const target = path.split("/").at(-1)!;
    switch (route) {
      case "GET /v1/prices": {
        const keys = ([] as unknown[]).concat(params.lookup_keys ?? []);
        return ok(list("/v1/prices", [...prices.values()].filter((price) => keys.includes(price.lookup_key))));
      }
      case "POST /v1/prices": {
        if (typeof params.product !== "string" || !params.unit_amount || typeof params.currency !== "string") return stripeError(400, "product, unit_amount and currency are required.");
        const recurring = params.recurring as { interval?: string } | undefined;
        const price = { id: id("price"), object: "price", active: true, lookup_key: null, product: params.product, unit_amount: Number(params.unit_amount), currency: params.currency, recurring: recurring ? { interval: recurring.interval } : null, metadata: params.metadata ?? {} };
        prices.set(price.id, price);
        return ok(price);
      }
      case "POST /v1/products":
        if (typeof params.name !== "string") return stripeError(400, "Missing required param: name.");
        return ok({ id: id("prod"), object: "product", name: params.name, metadata: params.metadata ?? {} });
      case "POST /v1/accounts": {
        const account = {
          id: id("acct"),
          object: "account",
          type: "express",
          controller: params.controller,
          capabilities: { transfers: "inactive" },
          charges_enabled: false,
          payouts_enabled: false,
          requirements: { currently_due: ["business_profile.url", "external_account", "tos_acceptance.date"] },
          email: params.email ?? null,
          metadata: params.metadata ?? {},
        };
        accounts.set(account.id, account);
        return ok(account);
      }
      case "GET /v1/accounts/:id": {
        const account = accounts.get(target);
        return account ? ok(account) : stripeError(404, `No such account: '${target}'`);
      }
      case "POST /v1/account_links": {
        const account = accounts.get(String(params.account));
        if (!account) return stripeError(400, `No such account: '${params.account}'`);
        if (params.type !== "account_onboarding" || !params.return_url || !params.refresh_url) return stripeError(400, "type=account_onboarding, return_url and refresh_url are required.");
        const link = { id: id("acctlink"), account: account.id, return_url: params.return_url, refresh_url: params.refresh_url };
        sessions.set(link.id, link);
        return ok({ object: "account_link", created: nowSeconds(), expires_at: nowSeconds() + 300, url: `${base}/onboarding/${link.id}` });
      }
      case "POST /v1/checkout/sessions": {
        const lineItems = params.line_items as { price?: string; quantity?: string }[] | undefined;
        const price = prices.get(String(lineItems?.[0]?.price));
        if (!price) return stripeError(400, `No such price: '${lineItems?.[0]?.price}'`);
        if ((params.mode !== "subscription" && params.mode !== "payment") || !params.success_url) return stripeError(400, "mode (payment or subscription) and success_url are required.");
        if ((params.mode === "payment") !== (price.recurring === null)) return stripeError(400, `mode ${params.mode} does not fit the price '${price.id}'.`);
        const session = { id: id("cs_test"), object: "checkout.session", ...params, url: "" };
        session.url = `${base}/checkout/${session.id}`;
        sessions.set(session.id, session);
        return ok(session);
      }
      case "POST /v1/billing_portal/sessions": {
        if (typeof params.customer !== "string") return stripeError(400, "Missing required param: customer.");
        const session = { id: id("bps"), object: "billing_portal.session", ...params, url: "" };
        session.url = `${base}/portal/${session.id}`;
        sessions.set(session.id, session);
        return ok(session);
      }
      case "GET /v1/subscriptions/:id": {
        const subscription = subscriptions.get(target);
        return subscription ? ok(subscription) : stripeError(404, `No such subscription: '${target}'`);
      }
      case "POST /v1/subscriptions/:id": {
        const subscription = subscriptions.get(target);
        if (!subscription) return stripeError(404, `No such subscription: '${target}'`);
        if (params.cancel_at_period_end !== undefined) subscription.cancel_at_period_end = params.cancel_at_period_end === "true";
        await sendEvent("customer.subscription.updated", subscription);
        return ok(subscription);
      }
      case "DELETE /v1/subscriptions/:id": {
        const subscription = subscriptions.get(target);
        if (!subscription) return stripeError(404, `No such subscription: '${target}'`);
        subscription.status = "canceled";
        await sendEvent("customer.subscription.deleted", subscription);
        return ok(subscription);
      }
      case "GET /v1/payment_intents/:id": {
        const payment = payments.get(target);
        if (!payment) return stripeError(404, `No such payment_intent: '${target}'`);
        return ok({ id: target, object: "payment_intent", amount: payment.amount, currency: payment.currency, status: "succeeded", application_fee_amount: payment.fee || null, latest_charge: payment.charge });
      }
      case "GET /v1/application_fees/:id": {
        const payment = [...payments.values()].find((candidate) => candidate.feeId === target);
        if (!payment) return stripeError(404, `No such application fee: '${target}'`);
        return ok({ id: target, object: "application_fee", amount: payment.fee, amount_refunded: payment.feeRefunded, refunded: payment.feeRefunded === payment.fee, currency: payment.currency, charge: payment.charge });
      }
      case "GET /v1/invoices/:id": {
        const invoice = invoices.find((candidate) => candidate.id === target);
        return invoice ? ok(invoice) : stripeError(404, `No such invoice: '${target}'`);
      }
      case "GET /v1/invoices":
        return ok(list("/v1/invoices", invoices.filter((invoice) => (!params.subscription || subscriptionOf(invoice) === params.subscription) && (!params.status || invoice.status === params.status)).reverse()));
      case "POST /v1/refunds": {
        const payment = payments.get(String(params.payment_intent));
        if (!payment) return stripeError(400, `No such payment_intent: '${params.payment_intent}'`);
        const amount = params.amount === undefined ? payment.amount - payment.refunded : Number(params.amount);
        if (!(amount > 0) || payment.refunded + amount > payment.amount) return stripeError(400, `Refund amount (${amount}) is greater than the unrefunded amount (${payment.amount - payment.refunded}).`);
        payment.refunded += amount;
        // As Stripe does with refund_application_fee: all of the fee for a full refund, else in proportion.
        if (params.refund_application_fee === "true") payment.feeRefunded = payment.refunded === payment.amount ? payment.fee : Math.min(payment.fee, Math.round((payment.fee * payment.refunded) / payment.amount));
        const refund = { id: id("re"), object: "refund", amount, currency: payment.currency, charge: payment.charge, payment_intent: params.payment_intent, status: "succeeded", metadata: params.metadata ?? {} };
        await sendEvent("charge.refunded", { id: payment.charge, object: "charge", amount: payment.amount, amount_refunded: payment.refunded, refunded: payment.refunded === payment.amount, currency: payment.currency, payment_intent: params.payment_intent, application_fee: payment.feeId });
        return ok(refund);
      }
      default:
        return stripeError(404, `Unrecognized request URL (${method}: ${path}).`);
    }
  }

  /** The checkout, portal and onboarding pages, and their buttons: what a browser sees at the URLs the API handed out. */
  async function pages(req: IncomingMessage, res: ServerResponse, url: URL) {
    const [, kind, sessionId, action] = url.pathname.split("/");
    const session = sessions.get(sessionId ?? "");
    if (!session || !["checkout", "portal", "onboarding"].includes(kind)) {
      res.writeHead(404, { "Content-Type": "text/plain" }).end("No such session.\n");
      return;
    }
    if (req.method === "POST" && kind === "checkout" && action === "pay") {
      const item = (session.line_items as { quantity: string }[])[0];
      const form = qs.parse(await readBody(req));
      await pay(session, Number(form.quantity ?? item.quantity), String(form.method ?? "card"));
      res.writeHead(303, { Location: String(session.success_url) }).end();
      return;
    }
    if (req.method === "POST" && kind === "checkout" && action === "settle" && session.payment_status === "unpaid") {
      await settle(session, qs.parse(await readBody(req)).outcome !== "failed");
      res.writeHead(303, { Location: String(session.success_url) }).end();
      return;
    }
    if (req.method === "POST" && kind === "onboarding" && action === "complete") {
      const account = accounts.get(String(session.account))!;
      Object.assign(account, { charges_enabled: true, payouts_enabled: true, capabilities: { transfers: "active" }, requirements: { currently_due: [] } });
      await sendEvent("account.updated", account, account.id);
      res.writeHead(303, { Location: String(session.return_url) }).end();
      return;
    }
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8", "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; form-action *" });
    res.end(kind === "checkout" ? checkoutPage(session, prices.get(String((session.line_items as { price: string }[])[0].price))!) : kind === "portal" ? portalPage(session) : onboardingPage(session, accounts.get(String(session.account))!));
  }

  /** What paying a session makes happen at Stripe, told to the webhook. A delayed method (`sepa_debit`) completes the session unpaid until it settles. */
  async function pay(session: StripeObject, quantity: number, method: string) {
    const price = prices.get(String((session.line_items as { price: string }[])[0].price))!;
    const customer = typeof session.customer === "string" ? session.customer : id("cus");
    const now = nowSeconds();
    const amount = Number(price.unit_amount ?? 0) * quantity;
    const currency = String(price.currency ?? "usd");
    if (session.mode === "payment") {
      const paymentIntent = id("pi");
      const delayed = method === "sepa_debit";
      if (!delayed) newPayment(paymentIntent, amount, currency, applicationFeeOf(session));
      Object.assign(session, {
        object: "checkout.session",
        status: "complete",
        payment_status: delayed ? "unpaid" : "paid",
        customer,
        payment_intent: paymentIntent,
        amount_subtotal: amount,
        amount_total: amount,
        currency,
        created: now,
      });
      await sendEvent("checkout.session.completed", checkoutSessionEvent(session));
      return;
    }
    const data = (session.subscription_data ?? {}) as { metadata?: Metadata; trial_period_days?: string; application_fee_percent?: string };
    const trialDays = Number(data.trial_period_days ?? 0);
    const periodEnd = trialDays > 0 ? now + trialDays * DAY : periodEndAfter(price, now);
    const subscription: StripeObject = {
      id: id("sub"),
      object: "subscription",
      status: trialDays > 0 ? "trialing" : "active",
      customer,
      metadata: data.metadata ?? {},
      cancel_at_period_end: false,
      application_fee_percent: data.application_fee_percent === undefined ? null : Number(data.application_fee_percent),
      trial_end: trialDays > 0 ? periodEnd : null,
      items: { object: "list", data: [{ id: id("si"), price, quantity, current_period_end: periodEnd }] },
    };
    subscriptions.set(subscription.id, subscription);
    await sendEvent("customer.subscription.created", subscription);
    if (trialDays > 0 || !data.metadata?.moduleId) return;
    await paidInvoice(subscription, amount, currency, { start: now, end: periodEnd });
  }

  /** A delayed payment's outcome, days later at Stripe: `async_payment_succeeded` (now paid) or `async_payment_failed`. */
  async function settle(session: StripeObject, succeeded: boolean) {
    if (succeeded) newPayment(String(session.payment_intent), Number(session.amount_total), String(session.currency), applicationFeeOf(session));
    session.payment_status = succeeded ? "paid" : "unpaid";
    await sendEvent(succeeded ? "checkout.session.async_payment_succeeded" : "checkout.session.async_payment_failed", checkoutSessionEvent(session));
  }

  /** A module subscription's invoice, paid: a charge of `amount` for the service `period`, told as `invoice.paid`. */
  async function paidInvoice(subscription: StripeObject, amount: number, currency: string, period: { start: number; end: number }) {
    const paymentIntent = id("pi");
    const fee = subscription.application_fee_percent === null ? null : Math.floor((amount * Number(subscription.application_fee_percent) + 50) / 100);
    newPayment(paymentIntent, amount, currency, fee ?? 0);
    const invoice = {
      id: id("in"),
      object: "invoice",
      status: "paid",
      amount_paid: amount,
      currency,
      created: nowSeconds(),
      customer: subscription.customer,
      application_fee_amount: fee,
      payment_intent: paymentIntent,
      parent: { type: "subscription_details", subscription_details: { subscription: subscription.id, metadata: subscription.metadata } },
      lines: { object: "list", data: [{ id: id("il"), object: "line_item", amount, currency, period, parent: { type: "subscription_item_details" } }] },
    };
    invoices.push(invoice);
    await sendEvent("invoice.paid", invoice);
    return invoice;
  }

  async function renew(subscriptionId: string, options: { paid?: boolean } = {}) {
    const subscription = subscriptions.get(subscriptionId);
    if (!subscription) throw new Error(`no subscription ${subscriptionId}`);
    const [item] = (subscription.items as { data: { price: StripeObject; quantity: number; current_period_end: number }[] }).data;
    const amount = Number(item.price.unit_amount ?? 0) * item.quantity;
    const currency = String(item.price.currency ?? "usd");
    if (options.paid === false) {
      subscription.status = "past_due";
      const invoice = { id: id("in"), object: "invoice", status: "open", amount_paid: 0, amount_due: amount, currency, created: nowSeconds(), customer: subscription.customer, parent: { type: "subscription_details", subscription_details: { subscription: subscription.id, metadata: subscription.metadata } } };
      invoices.push(invoice);
      await sendEvent("customer.subscription.updated", subscription);
      return invoice;
    }
    const start = item.current_period_end;
    item.current_period_end = periodEndAfter(item.price, start);
    Object.assign(subscription, { status: "active", trial_end: null });
    const invoice = await paidInvoice(subscription, amount, currency, { start, end: item.current_period_end });
    await sendEvent("customer.subscription.updated", subscription);
    return invoice;
  }

  /** Signs an event as Stripe does and sends it to the webhook; throws unless it is accepted. */
  async function sendEvent(type: string, object: StripeObject, account?: string) {
    const event = { id: id("evt"), object: "event", type, created: nowSeconds(), ...(account ? { account } : {}), data: { object: structuredClone(object) } };
    events.push(event);
    if (held) held.push(() => deliver(event, account));
    else await deliver(event, account);
  }

  async function deliver(event: { type: string }, account?: string) {
    if (!options.webhook) return;
    const { type } = event;
    const payload = JSON.stringify(event);
    const timestamp = nowSeconds();
    const secret = account ? options.webhook.connectSecret : options.webhook.secret;
    const signature = createHmac("sha256", secret).update(`${timestamp}.${payload}`).digest("hex");
    const answer = await fetch(options.webhook.url, { method: "POST", headers: { "Content-Type": "application/json", "Stripe-Signature": `t=${timestamp},v1=${signature}` }, body: payload });
    if (!answer.ok) throw new Error(`the webhook answered ${answer.status} to ${type}: ${await answer.text()}`);
  }

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const handled = url.pathname.startsWith("/v1/") ? api(req, res, url) : pages(req, res, url);
    handled.catch((error: Error) => {
      if (!res.headersSent) res.writeHead(500, { "Content-Type": "text/plain" }).end(`local Stripe: ${error.message}\n`);
    });
  });
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(options.port ?? 0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    requests,
    events,
    failNext: (count, how, path) => (failures = { count, how, path }),
    renew,
    recordPayment: (paymentIntent, amount, currency, fee) => void newPayment(paymentIntent, amount, currency, fee),
    setSubscription: (subscriptionId, change) => Object.assign(subscriptions.get(subscriptionId)!, change),
    holdEvents: () => {
      const waiting = (held ??= []);
      return async () => {
        if (held === waiting) held = null;
        for (const send of waiting.splice(0)) await send();
      };
    },
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const list = (url: string, data: unknown[]) => ({ object: "list", data, has_more: false, url });

/** A price's billing period, in seconds. */
/** The end of a price's billing period that starts at `start` (seconds): a calendar month or year later, as Stripe bills. */
const periodEndAfter = (price: StripeObject, start: number): number => {
  const end = new Date(start * 1000);
  if ((price.recurring as { interval?: string } | undefined)?.interval === "year") end.setUTCFullYear(end.getUTCFullYear() + 1);
  else end.setUTCMonth(end.getUTCMonth() + 1);
  return Math.floor(end.getTime() / 1000);
};

/** The application fee a checkout's payment intent takes (payment mode), as the API asked for it. */
const applicationFeeOf = (session: StripeObject) => Number((session.payment_intent_data as { application_fee_amount?: string } | undefined)?.application_fee_amount ?? 0);

/** A checkout session as its events carry it. */
const checkoutSessionEvent = (session: StripeObject): StripeObject => {
  const { id: sessionId, mode, status, payment_status, metadata, client_reference_id, customer, payment_intent, amount_subtotal, amount_total, currency, created } = session;
  return { id: sessionId, object: "checkout.session", mode, status, payment_status, metadata: metadata ?? {}, client_reference_id: client_reference_id ?? null, customer, payment_intent, amount_subtotal, amount_total, currency, created };
};

const subscriptionOf = (invoice: StripeObject) => (invoice.parent as { subscription_details: { subscription: string } }).subscription_details.subscription;

function planPrice(price: LocalPrice): StripeObject {
  return { id: price.id, object: "price", active: true, lookup_key: price.lookupKey, unit_amount: 1500, currency: "usd", metadata: { entitlements: price.entitlements }, recurring: { interval: "month" } };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk)).on("end", () => resolve(Buffer.concat(chunks).toString("utf8"))).on("error", reject);
  });
}

const escape = (value: unknown) => String(value).replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

const page = (title: string, body: string) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${escape(title)} (local Stripe)</title>
<style>body{font:16px system-ui;max-width:32rem;margin:2rem auto;padding:0 1rem}dt{font-weight:600}button{font:inherit;padding:.5rem 1rem}</style></head>
<body><main><h1>${escape(title)} (local Stripe)</h1>${body}</main></body></html>`;

const money = (amount: unknown, currency: unknown) => `${(Number(amount) / 100).toFixed(2)} ${String(currency).toUpperCase()}`;

function checkoutPage(session: StripeObject, price: StripeObject): string {
  const [item] = session.line_items as { price: string; quantity: string; adjustable_quantity?: { minimum?: string; maximum?: string } }[];
  const payment = session.payment_intent_data as { application_fee_amount?: string; transfer_data?: { destination?: string }; metadata?: Metadata } | undefined;
  const subscription = session.subscription_data as { application_fee_percent?: string; transfer_data?: { destination?: string }; trial_period_days?: string; metadata?: Metadata } | undefined;
  const metadata: Metadata = payment?.metadata ?? subscription?.metadata ?? {};
  const who = typeof session.customer === "string" ? `customer ${session.customer}` : `new customer ${session.customer_email ?? ""}`;
  const rows: [string, unknown][] = [
    ["Price", `${item.price}: ${money(price.unit_amount, price.currency)}${price.recurring ? ` a ${(price.recurring as { interval: string }).interval}` : ""}`],
    [metadata.moduleId ? "Module" : "Business", metadata.moduleId ?? metadata.businessId ?? "?"],
    ...(metadata.businessId && metadata.moduleId ? [["For business", metadata.businessId] as [string, unknown]] : []),
    ["Billed to", who],
    ...(payment?.application_fee_amount ? [["Marketplace fee", money(payment.application_fee_amount, price.currency)] as [string, unknown]] : []),
    ...(subscription?.application_fee_percent ? [["Marketplace fee", `${subscription.application_fee_percent} %`] as [string, unknown]] : []),
    ...((payment ?? subscription)?.transfer_data?.destination ? [["Paid out to", (payment ?? subscription)!.transfer_data!.destination] as [string, unknown]] : []),
    ...(subscription?.trial_period_days ? [["Free trial", `${subscription.trial_period_days} days`] as [string, unknown]] : []),
  ];
  const adjustable = session.mode === "subscription" && !metadata.moduleId;
  return page(
    "Checkout",
    `<p>What the Marketplace API sent to Stripe:</p>
<dl>${rows.map(([term, value]) => `<dt>${escape(term)}</dt><dd>${escape(value)}</dd>`).join("")}</dl>
<form method="post" action="/checkout/${escape(session.id)}/pay"><label>${metadata.moduleId ? "Quantity" : "Seats"} <input name="quantity" type="number" value="${escape(item.quantity)}" min="${escape(item.adjustable_quantity?.minimum ?? 1)}" max="${escape(item.adjustable_quantity?.maximum ?? 10000)}"${adjustable ? "" : " readonly"}></label>
<p><button type="submit">Pay</button>${session.mode === "payment" ? ` <button type="submit" name="method" value="sepa_debit">Pay by SEPA debit (settles later)</button>` : ""} <a href="${escape(session.cancel_url)}">Cancel</a></p></form>${
      session.payment_status === "unpaid"
        ? `<form method="post" action="/checkout/${escape(session.id)}/settle"><p>The SEPA debit is pending. <button type="submit" name="outcome" value="succeeded">Settle as paid</button> <button type="submit" name="outcome" value="failed">Fail it</button></p></form>`
        : ""
    }`,
  );
}

function portalPage(session: StripeObject): string {
  return page("Billing portal", `<p>Customer ${escape(session.customer)}.</p><p><a href="${escape(session.return_url)}">Return to the Marketplace</a></p>`);
}

function onboardingPage(link: StripeObject, account: StripeObject): string {
  const due = (account.requirements as { currently_due: string[] }).currently_due;
  return page(
    "Payouts onboarding",
    `<p>Connected account ${escape(account.id)} of publisher ${escape((account.metadata as Metadata).publisherId ?? "?")}.</p>
<p>${due.length ? `Stripe still needs: ${due.map(escape).join(", ")}.` : "Nothing more is needed."}</p>
<form method="post" action="/onboarding/${escape(link.id)}/complete"><p><button type="submit">Complete onboarding</button> <a href="${escape(link.refresh_url)}">Leave</a></p></form>`,
  );
}
