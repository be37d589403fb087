import { id, list, nowSeconds, subscriptionOf } from "./objects";
import type { StripeState } from "./state";

/** Stripe's API as the stripe library calls it, answered from the local Stripe's state: Stripe's object shapes and error shape. */

export interface ApiAnswer {
  status: number;
  body: unknown;
}

export const stripeError = (status: number, message: string, type = "invalid_request_error"): ApiAnswer => ({ status, body: { error: { type, message } } });
const ok = (body: unknown): ApiAnswer => ({ status: 200, body });

export async function answerApi(state: StripeState, method: string, path: string, params: Record<string, unknown>): Promise<ApiAnswer> {
  const { prices, accounts, sessions, subscriptions, payments, invoices, events } = state;
  // This stand-in's own test helper (Stripe's test clocks do it by advancing time): the next period of a module subscription, paid or failed.
  const renewal = /^\/v1\/test_helpers\/subscriptions\/(sub_[0-9a-f]+)\/renew$/.exec(path);
  if (method === "POST" && renewal) {
    if (!subscriptions.has(renewal[1])) return stripeError(404, `No such subscription: '${renewal[1]}'`);
    return ok(await state.renew(renewal[1], { paid: params.paid !== "false", byCredit: params.paid_by === "credit" }));
  }
  const route = `${method} ${path.replace(/\/(acct|sub|pi|in|fee|price)_[0-9a-f]+$/, "/:id")}`;
  const target = path.split("/").at(-1)!;
  switch (route) {
    case "GET /v1/prices": {
      const keys = ([] as unknown[]).concat(params.lookup_keys ?? []);
      return ok(list("/v1/prices", [...prices.values()].filter((price) => keys.includes(price.lookup_key))));
    }
    case "GET /v1/prices/:id": {
      const price = prices.get(target);
      return price ? ok(price) : stripeError(404, `No such price: '${target}'`);
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
      return ok({ object: "account_link", created: nowSeconds(), expires_at: nowSeconds() + 300, url: `${state.base}/onboarding/${link.id}` });
    }
    case "POST /v1/checkout/sessions": {
      const lineItems = params.line_items as { price?: string; quantity?: string }[] | undefined;
      const price = prices.get(String(lineItems?.[0]?.price));
      if (!price) return stripeError(400, `No such price: '${lineItems?.[0]?.price}'`);
      if ((params.mode !== "subscription" && params.mode !== "payment") || !params.success_url) return stripeError(400, "mode (payment or subscription) and success_url are required.");
      if ((params.mode === "payment") !== (price.recurring === null)) return stripeError(400, `mode ${params.mode} does not fit the price '${price.id}'.`);
      const session = { id: id("cs_test"), object: "checkout.session", ...params, url: "" };
      session.url = `${state.base}/checkout/${session.id}`;
      sessions.set(session.id, session);
      return ok(session);
    }
    case "POST /v1/billing_portal/sessions": {
      if (typeof params.customer !== "string") return stripeError(400, "Missing required param: customer.");
      const session = { id: id("bps"), object: "billing_portal.session", ...params, url: "" };
      session.url = `${state.base}/portal/${session.id}`;
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
      // A switch of price (items[0][price]), as the Billing Portal or a migration makes it: later invoices bill the new one.
      const switched = (Object.values((params.items ?? {}) as Record<string, { price?: string }>)[0] ?? {}).price;
      if (switched !== undefined) {
        const price = prices.get(switched);
        if (!price) return stripeError(400, `No such price: '${switched}'`);
        (subscription.items as { data: { price: unknown }[] }).data[0].price = price;
      }
      await events.send("customer.subscription.updated", subscription);
      return ok(subscription);
    }
    case "DELETE /v1/subscriptions/:id": {
      const subscription = subscriptions.get(target);
      if (!subscription) return stripeError(404, `No such subscription: '${target}'`);
      subscription.status = "canceled";
      await events.send("customer.subscription.deleted", subscription);
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
      await events.send("charge.refunded", { id: payment.charge, object: "charge", amount: payment.amount, amount_refunded: payment.refunded, refunded: payment.refunded === payment.amount, currency: payment.currency, payment_intent: params.payment_intent, application_fee: payment.feeId });
      return ok(refund);
    }
    default:
      return stripeError(404, `Unrecognized request URL (${method}: ${path}).`);
  }
}
