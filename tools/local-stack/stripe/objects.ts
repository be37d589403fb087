import { randomBytes } from "node:crypto";

/** Stripe's objects as this stand-in keeps and answers them, and what reads them without state. */

export type StripeObject = Record<string, unknown> & { id: string };
export type Metadata = Record<string, string>;

export interface LocalPrice {
  id: string;
  lookupKey: string;
  /** The price's `entitlements` metadata (§11). */
  entitlements: string;
}

export const id = (prefix: string) => `${prefix}_${randomBytes(12).toString("hex")}`;
export const nowSeconds = () => Math.floor(Date.now() / 1000);
export const DAY = 24 * 3600;

export const list = (url: string, data: unknown[]) => ({ object: "list", data, has_more: false, url });

/** The end of a price's billing period that starts at `start` (seconds): a calendar month or year later, as Stripe bills. */
export const periodEndAfter = (price: StripeObject, start: number): number => {
  const end = new Date(start * 1000);
  if ((price.recurring as { interval?: string } | undefined)?.interval === "year") end.setUTCFullYear(end.getUTCFullYear() + 1);
  else end.setUTCMonth(end.getUTCMonth() + 1);
  return Math.floor(end.getTime() / 1000);
};

/** The application fee a checkout's payment intent takes (payment mode), as the API asked for it. */
export const applicationFeeOf = (session: StripeObject) => Number((session.payment_intent_data as { application_fee_amount?: string } | undefined)?.application_fee_amount ?? 0);

/** A checkout session as its events carry it. */
export const checkoutSessionEvent = (session: StripeObject): StripeObject => {
  const { id: sessionId, mode, status, payment_status, metadata, client_reference_id, customer, payment_intent, amount_subtotal, amount_total, currency, created } = session;
  return { id: sessionId, object: "checkout.session", mode, status, payment_status, metadata: metadata ?? {}, client_reference_id: client_reference_id ?? null, customer, payment_intent, amount_subtotal, amount_total, currency, created };
};

export const subscriptionOf = (invoice: StripeObject) => (invoice.parent as { subscription_details: { subscription: string } }).subscription_details.subscription;

/** A business plan's price (§17), as configured for the local stack. */
export function planPrice(price: LocalPrice): StripeObject {
  return { id: price.id, object: "price", active: true, lookup_key: price.lookupKey, unit_amount: 1500, currency: "usd", metadata: { entitlements: price.entitlements }, recurring: { interval: "month" } };
}
