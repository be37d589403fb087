import { z } from "zod";
import type { SubscriptionStatus } from "../access/rules";
import type { PurchaseOwner } from "../accounts/purchase-store";
import { documentIdProblem } from "../core/documents";
import { documentId } from "../core/schemas";

/**
 * Stripe's events and objects as far as this service reads them (§11, §20). They are read
 * loosely: only the fields used are checked, so a newer API version that adds fields changes
 * nothing, and a field that moved between versions is looked for in both places.
 */

export const metadata = z.record(z.string(), z.string()).nullish();
export const unixSeconds = z.number().int().nonnegative();
const stripeId = z.string().min(1).max(255);
/** An id, or the object it names when expanded. */
const reference = z.union([stripeId, z.looseObject({ id: stripeId })]);
export const idOf = (value: z.output<typeof reference> | null | undefined): string | null => (value == null ? null : typeof value === "string" ? value : value.id);

/** An event as far as this service reads it; its id becomes a document id. */
export const stripeEvent = z.looseObject({
  id: documentId,
  type: z.string(),
  created: unixSeconds,
  /** The connected account an event of a Connect account comes from. */
  account: z.string().nullish(),
  data: z.looseObject({ object: z.unknown() }),
});
export type StripeEvent = z.output<typeof stripeEvent>;

const stripeProduct = z.looseObject({ id: z.string(), metadata });
export const stripePrice = z.looseObject({
  id: z.string(),
  lookup_key: z.string().nullish(),
  metadata,
  product: z.union([z.string(), stripeProduct]).nullish(),
  unit_amount: z.number().int().nullish(),
  currency: z.string().nullish(),
});
const stripeItem = z.looseObject({
  price: stripePrice,
  quantity: z.number().int().nonnegative().nullish(),
  current_period_end: unixSeconds.nullish(),
});
const stripeCustomer = z.looseObject({ id: z.string(), name: z.string().nullish() });

export const stripeSubscriptionObject = z.looseObject({
  id: stripeId,
  status: z.string(),
  customer: z.union([z.string(), stripeCustomer]),
  metadata,
  items: z.looseObject({ data: z.array(stripeItem).min(1) }),
  current_period_end: unixSeconds.nullish(),
  cancel_at_period_end: z.boolean().nullish(),
  application_fee_percent: z.number().nullish(),
  trial_end: unixSeconds.nullish(),
});
export type StripeSubscriptionObject = z.output<typeof stripeSubscriptionObject>;

/** What Stripe's subscription statuses mean here (§11): `not_written` are not stored at all. */
export const SUBSCRIPTION_STATUS: ReadonlyMap<string, SubscriptionStatus | "not_written"> = new Map([
  ["active", "active"],
  ["trialing", "trialing"],
  ["past_due", "past_due"],
  ["unpaid", "past_due"],
  ["canceled", "canceled"],
  ["incomplete_expired", "expired"],
  ["paused", "canceled"],
  ["incomplete", "not_written"],
]);

/** What a price's metadata promises after a subscription ends (§27): the service writes `fallback` on every price it makes. */
export const promiseOf = (price: { metadata?: Record<string, string> | null }): "none" | "perpetual" => (price.metadata?.fallback === "perpetual" ? "perpetual" : "none");

/** The fallback a subscription's price promises (§27: the price's `fallback` metadata, kept by the buyer whatever the module's price becomes). */
export const fallbackOf = (object: StripeSubscriptionObject): "none" | "perpetual" => promiseOf(object.items.data[0].price);

/** The period end of a subscription: its first item's (newer API versions), else its own. */
export const periodEndOf = (object: StripeSubscriptionObject): number | null => object.items.data[0].current_period_end ?? object.current_period_end ?? null;

export const checkoutSessionObject = z.looseObject({
  id: stripeId,
  mode: z.string(),
  payment_status: z.string().nullish(),
  metadata,
  customer: reference.nullish(),
  payment_intent: reference.nullish(),
  amount_total: z.number().int().nonnegative().nullish(),
  currency: z.string().nullish(),
  created: unixSeconds.nullish(),
});

export const invoiceObject = z.looseObject({
  id: stripeId,
  status: z.string().nullish(),
  amount_paid: z.number().int().nonnegative(),
  currency: z.string(),
  created: unixSeconds,
  customer: reference.nullish(),
  application_fee_amount: z.number().int().nonnegative().nullish(),
  /** Older API versions. */
  subscription: reference.nullish(),
  payment_intent: reference.nullish(),
  subscription_details: z.looseObject({ metadata }).nullish(),
  /** Newer API versions. */
  parent: z.looseObject({ subscription_details: z.looseObject({ subscription: reference.nullish(), metadata }).nullish() }).nullish(),
  payments: z.looseObject({ data: z.array(z.looseObject({ payment: z.looseObject({ payment_intent: reference.nullish() }).nullish() })) }).nullish(),
  /** What it billed before discounts and credit (0 for a trial's invoice); absent in some older payloads. */
  subtotal: z.number().int().nullish(),
  /**
   * Its lines, each with the service period it bills (a subscription's: the period paid in
   * advance) and the price it bills: `pricing.price_details.price` in newer API versions (an id),
   * `price` in older ones (the object, with its metadata).
   */
  lines: z
    .looseObject({
      data: z.array(
        z.looseObject({
          period: z.looseObject({ start: unixSeconds, end: unixSeconds }).nullish(),
          pricing: z.looseObject({ price_details: z.looseObject({ price: reference.nullish() }).nullish() }).nullish(),
          price: z.union([stripeId, z.looseObject({ id: stripeId, metadata })]).nullish(),
        }),
      ),
    })
    .nullish(),
});
export type InvoiceObject = z.output<typeof invoiceObject>;

/** The service period an invoice pays for (§27): from its lines' earliest start to their latest end; null without one. */
export const servicePeriodOf = (invoice: InvoiceObject): { start: Date; end: Date } | null => {
  const periods = (invoice.lines?.data ?? []).flatMap((line) => (line.period && line.period.end > line.period.start ? [line.period] : []));
  if (periods.length === 0) return null;
  return { start: new Date(Math.min(...periods.map((period) => period.start)) * 1000), end: new Date(Math.max(...periods.map((period) => period.end)) * 1000) };
};

/** A Stripe Price as the fallback rule reads it: its metadata says what it promises (§27). */
export const priceObject = z.looseObject({ id: stripeId, metadata });

/**
 * The price an invoice bills, as its first line with one names it: the price object when the
 * payload carries it with its metadata, else its id (to be read from Stripe); null without one.
 */
export const invoicePriceOf = (invoice: InvoiceObject): { id: string; metadata?: Record<string, string> | null } | null => {
  for (const line of invoice.lines?.data ?? []) {
    if (line.price && typeof line.price === "object") return line.price;
    const id = idOf(line.pricing?.price_details?.price) ?? (typeof line.price === "string" ? line.price : null);
    if (id) return { id };
  }
  return null;
};

/** The payment intent an invoice was paid with, in the older API's field or the newer one's payments. */
export const paymentIntentOf = (invoice: InvoiceObject): string | null =>
  idOf(invoice.payment_intent) ?? idOf(invoice.payments?.data.find((entry) => entry.payment?.payment_intent)?.payment?.payment_intent);

/** The subscription an invoice bills, in the newer API's parent or the older API's field. */
export const subscriptionOf = (invoice: InvoiceObject): string | null => idOf(invoice.parent?.subscription_details?.subscription ?? invoice.subscription);

export const chargeObject = z.looseObject({
  id: stripeId,
  amount: z.number().int().nonnegative(),
  amount_refunded: z.number().int().nonnegative(),
  currency: z.string(),
  payment_intent: reference.nullish(),
  /** The application fee taken on it (a destination charge with the marketplace's fee). */
  application_fee: reference.nullish(),
});

export const paymentIntentObject = z.looseObject({ id: stripeId, application_fee_amount: z.number().int().nonnegative().nullish() });

export const applicationFeeObject = z.looseObject({ id: stripeId, amount: z.number().int().nonnegative(), amount_refunded: z.number().int().nonnegative() });

export const disputeObject = z.looseObject({
  id: stripeId,
  amount: z.number().int().nonnegative(),
  status: z.string(),
  charge: reference.nullish(),
  payment_intent: reference.nullish(),
});

export const accountObject = z.looseObject({
  id: stripeId,
  metadata,
  charges_enabled: z.boolean().nullish(),
  payouts_enabled: z.boolean().nullish(),
  requirements: z.looseObject({ currently_due: z.array(z.string()).nullish() }).nullish(),
});

export interface Buyer {
  moduleId: string;
  buyerUid: string;
  owner: PurchaseOwner;
  quantity: number | null;
}

/** The buyer a purchase's metadata names (§20's checkout writes it), or why it names none. */
export function buyerOf(metadata: Record<string, string> | null | undefined): Buyer | string {
  const { moduleId, buyerUid, businessId, quantity } = metadata ?? {};
  if (!moduleId || documentIdProblem(moduleId)) return "the metadata has no valid moduleId";
  if (!buyerUid || documentIdProblem(buyerUid)) return "the metadata has no valid buyerUid";
  if (businessId !== undefined && documentIdProblem(businessId)) return "the metadata's businessId is not a valid id";
  const seats = quantity === undefined ? null : Number(quantity);
  return { moduleId, buyerUid, owner: businessId ? { kind: "business", id: businessId } : { kind: "user", id: buyerUid }, quantity: seats !== null && Number.isInteger(seats) && seats > 0 ? seats : null };
}
