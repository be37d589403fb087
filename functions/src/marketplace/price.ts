import type { ModulePrice } from "./module-store";

/** A module's price as buyers see it (contract §20): everything but the Stripe price behind it. */
export interface PublicPrice {
  model: "one_time" | "subscription";
  amount: number;
  currency: string;
  interval: "month" | "year" | null;
  trialDays: number;
  perSeat: boolean;
}

export const publicPrice = (price: ModulePrice | null): PublicPrice | null =>
  price && { model: price.model, amount: price.amount, currency: price.currency, interval: price.interval, trialDays: price.trialDays, perSeat: price.perSeat };
