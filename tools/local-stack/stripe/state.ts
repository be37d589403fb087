import type { EventSender } from "./events";
import { applicationFeeOf, checkoutSessionEvent, DAY, id, nowSeconds, periodEndAfter, planPrice, type LocalPrice, type Metadata, type StripeObject } from "./objects";

/** A payment as Stripe holds one: what was charged and refunded so far; the application fee taken, and refunded so far. */
export interface Payment {
  charge: string;
  amount: number;
  currency: string;
  refunded: number;
  fee: number;
  feeId: string | null;
  feeRefunded: number;
}

/**
 * What the local Stripe holds (sessions and account links, connected accounts, prices,
 * subscriptions, payments by payment intent, invoices), and what paying, settling, renewing and
 * onboarding do to it, each told to the webhook as Stripe's events.
 */
export class StripeState {
  readonly sessions = new Map<string, StripeObject>();
  readonly accounts = new Map<string, StripeObject>();
  readonly prices: Map<string, StripeObject>;
  readonly subscriptions = new Map<string, StripeObject>();
  readonly payments = new Map<string, Payment>();
  readonly invoices: StripeObject[] = [];
  /** The server's own address, for the page URLs its objects carry; set once it listens. */
  base = "";

  constructor(
    plans: LocalPrice[],
    readonly events: EventSender,
  ) {
    this.prices = new Map(plans.map((price) => [price.id, planPrice(price)]));
  }

  newPayment(paymentIntent: string, amount: number, currency: string, fee: number): void {
    this.payments.set(paymentIntent, { charge: id("ch"), amount, currency, refunded: 0, fee, feeId: fee > 0 ? id("fee") : null, feeRefunded: 0 });
  }

  priceOf(session: StripeObject): StripeObject {
    return this.prices.get(String((session.line_items as { price: string }[])[0].price))!;
  }

  /** What paying a session makes happen at Stripe. A delayed method (`sepa_debit`) completes the session unpaid until it settles. */
  async pay(session: StripeObject, quantity: number, method: string): Promise<void> {
    const price = this.priceOf(session);
    const customer = typeof session.customer === "string" ? session.customer : id("cus");
    const now = nowSeconds();
    const amount = Number(price.unit_amount ?? 0) * quantity;
    const currency = String(price.currency ?? "usd");
    if (session.mode === "payment") {
      const paymentIntent = id("pi");
      const delayed = method === "sepa_debit";
      if (!delayed) this.newPayment(paymentIntent, amount, currency, applicationFeeOf(session));
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
      await this.events.send("checkout.session.completed", checkoutSessionEvent(session));
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
    this.subscriptions.set(subscription.id, subscription);
    await this.events.send("customer.subscription.created", subscription);
    if (trialDays > 0 || !data.metadata?.moduleId) return;
    await this.paidInvoice(subscription, amount, currency, { start: now, end: periodEnd });
  }

  /** A delayed payment's outcome, days later at Stripe: `async_payment_succeeded` (now paid) or `async_payment_failed`. */
  async settle(session: StripeObject, succeeded: boolean): Promise<void> {
    if (succeeded) this.newPayment(String(session.payment_intent), Number(session.amount_total), String(session.currency), applicationFeeOf(session));
    session.payment_status = succeeded ? "paid" : "unpaid";
    await this.events.send(succeeded ? "checkout.session.async_payment_succeeded" : "checkout.session.async_payment_failed", checkoutSessionEvent(session));
  }

  /** Ends a module subscription's period: the next invoice paid (a new period), or with `paid: false` failed (`past_due`). Answers the invoice. */
  async renew(subscriptionId: string, options: { paid?: boolean; byCredit?: boolean } = {}): Promise<StripeObject> {
    const subscription = this.subscriptions.get(subscriptionId);
    if (!subscription) throw new Error(`no subscription ${subscriptionId}`);
    const [item] = (subscription.items as { data: { price: StripeObject; quantity: number; current_period_end: number }[] }).data;
    const amount = Number(item.price.unit_amount ?? 0) * item.quantity;
    const currency = String(item.price.currency ?? "usd");
    if (options.paid === false) {
      subscription.status = "past_due";
      const invoice = { id: id("in"), object: "invoice", status: "open", amount_paid: 0, amount_due: amount, currency, created: nowSeconds(), customer: subscription.customer, parent: { type: "subscription_details", subscription_details: { subscription: subscription.id, metadata: subscription.metadata } } };
      this.invoices.push(invoice);
      await this.events.send("customer.subscription.updated", subscription);
      return invoice;
    }
    const start = item.current_period_end;
    item.current_period_end = periodEndAfter(item.price, start);
    Object.assign(subscription, { status: "active", trial_end: null });
    const invoice = await this.paidInvoice(subscription, amount, currency, { start, end: item.current_period_end }, options.byCredit);
    await this.events.send("customer.subscription.updated", subscription);
    return invoice;
  }

  /** A connected account's onboarding finished: it can take charges and payouts (`account.updated`, a Connect event). */
  async completeOnboarding(accountId: string): Promise<void> {
    const account = this.accounts.get(accountId)!;
    Object.assign(account, { charges_enabled: true, payouts_enabled: true, capabilities: { transfers: "active" }, requirements: { currently_due: [] } });
    await this.events.send("account.updated", account, account.id);
  }

  /**
   * A module subscription's invoice, paid: a charge of `amount` for the service `period`, told as
   * `invoice.paid`; `byCredit`, paid from the customer's credit balance (as a 100% coupon would):
   * it bills the price and charges nothing, with no payment intent. Its line names the price it
   * bills as newer API versions do (`pricing.price_details.price`, an id).
   */
  private async paidInvoice(subscription: StripeObject, amount: number, currency: string, period: { start: number; end: number }, byCredit = false): Promise<StripeObject> {
    const [item] = (subscription.items as { data: { price: StripeObject }[] }).data;
    const charged = byCredit ? 0 : amount;
    const paymentIntent = byCredit ? null : id("pi");
    const fee = byCredit || subscription.application_fee_percent === null ? null : Math.floor((amount * Number(subscription.application_fee_percent) + 50) / 100);
    if (paymentIntent) this.newPayment(paymentIntent, amount, currency, fee ?? 0);
    const invoice = {
      id: id("in"),
      object: "invoice",
      status: "paid",
      amount_paid: charged,
      subtotal: amount,
      currency,
      created: nowSeconds(),
      customer: subscription.customer,
      application_fee_amount: fee,
      payment_intent: paymentIntent,
      parent: { type: "subscription_details", subscription_details: { subscription: subscription.id, metadata: subscription.metadata } },
      lines: {
        object: "list",
        data: [{ id: id("il"), object: "line_item", amount, currency, period, pricing: { type: "price_details", price_details: { price: item.price.id, product: item.price.product ?? null } }, parent: { type: "subscription_item_details" } }],
      },
    };
    this.invoices.push(invoice);
    await this.events.send("invoice.paid", invoice);
    return invoice;
  }
}
