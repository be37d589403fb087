import type Stripe from "stripe";
import { ApiError } from "./errors";
import type { Logger } from "./logger";

/**
 * The `stripe` library as every Stripe call of the service makes it (§11, §17, §20): one client
 * for the configured key and API base, and one rule for failures.
 */

export interface StripeSettings {
  stripeSecretKey: string;
  /** Where the library calls (STRIPE_API_BASE); null: Stripe itself. */
  apiBase: { protocol: "http" | "https"; host: string; port: number } | null;
}

let stripeClass: Promise<typeof Stripe> | undefined;
// Loaded by the first Stripe call, not with the app (it costs a cold start ~70 ms).
export const loadStripe = () => (stripeClass ??= import("stripe").then(({ default: StripeClass }) => StripeClass));

/** A client for the configured key and API base, or 503 billing_not_configured. */
export async function stripeClient(settings: StripeSettings, timeoutMs: number): Promise<Stripe> {
  if (!settings.stripeSecretKey) throw new ApiError("billing_not_configured", "Billing is not configured on this service (STRIPE_SECRET_KEY).");
  const StripeClass = await loadStripe();
  return new StripeClass(settings.stripeSecretKey, {
    maxNetworkRetries: 1,
    timeout: timeoutMs,
    telemetry: false,
    ...(settings.apiBase ?? {}),
  });
}

/** Stripe refusing, failing or out of reach: 502 billing_unavailable, with the cause in the log only. */
export async function callStripe<T>(logger: Logger, what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof ApiError) throw error;
    const { type, code, statusCode, message } = error as { type?: string; code?: string; statusCode?: number; message?: string };
    logger.error("stripe call failed", { what, type, code, statusCode, message });
    throw new ApiError("billing_unavailable", "The billing provider did not complete the request; try again in a moment.");
  }
}
