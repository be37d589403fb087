/** Stripe events as Stripe sends them, signed offline with the stripe package's own test signer. */
import Stripe from "stripe";
import { LOCAL_STRIPE_WEBHOOK_SECRET } from "../../src/config";

let counter = 0;

export interface SubscriptionEventOptions {
  type?: string;
  created?: number;
  id?: string;
  subscriptionId?: string;
  status?: string;
  businessId?: string | null;
  customer?: string | { id: string; object: "customer"; name: string | null };
  price?: { id?: string; lookup_key?: string | null; metadata?: Record<string, string>; product?: string | { id: string; object: "product"; metadata: Record<string, string> } };
  quantity?: number;
  itemPeriodEnd?: number | null;
  subscriptionPeriodEnd?: number;
  cancelAtPeriodEnd?: boolean;
}

export const nowSeconds = () => Math.floor(Date.now() / 1000);

/** A `customer.subscription.*` event with a Stripe-shaped subscription object (API 2025+: periods on items). */
export function subscriptionEvent(options: SubscriptionEventOptions = {}) {
  counter += 1;
  const created = options.created ?? nowSeconds();
  const price = { id: "price_team_monthly", object: "price", lookup_key: "team-monthly", metadata: { entitlements: "pro" }, product: "prod_team", ...options.price };
  return {
    id: options.id ?? `evt_test_${counter}_${Date.now()}`,
    object: "event",
    api_version: "2025-09-30.clover",
    created,
    livemode: false,
    type: options.type ?? "customer.subscription.created",
    data: {
      object: {
        id: options.subscriptionId ?? "sub_1",
        object: "subscription",
        status: options.status ?? "active",
        customer: options.customer ?? "cus_1",
        metadata: options.businessId === null ? {} : { businessId: options.businessId ?? "acme-corp" },
        cancel_at_period_end: options.cancelAtPeriodEnd ?? false,
        ...(options.subscriptionPeriodEnd !== undefined ? { current_period_end: options.subscriptionPeriodEnd } : {}),
        items: {
          object: "list",
          data: [
            {
              id: "si_1",
              object: "subscription_item",
              price,
              quantity: options.quantity ?? 5,
              ...(options.itemPeriodEnd === null ? {} : { current_period_end: options.itemPeriodEnd ?? created + 30 * 24 * 60 * 60 }),
            },
          ],
        },
      },
    },
  };
}

/** The body and Stripe-Signature header Stripe would send for `event`. */
export function signed(event: object | string, options: { secret?: string; timestamp?: number } = {}) {
  const payload = typeof event === "string" ? event : JSON.stringify(event);
  const header = Stripe.webhooks.generateTestHeaderString({ payload, secret: options.secret ?? LOCAL_STRIPE_WEBHOOK_SECRET, timestamp: options.timestamp });
  return { payload, header };
}
