import type { ModulePrice } from "./module-store";

/** A module's price as buyers see it (contract §20): everything but the Stripe price behind it. */
export type PublicPrice = Omit<ModulePrice, "stripePriceId" | "updatedAt">;

export const publicPrice = (price: ModulePrice | null): PublicPrice | null =>
  price && { model: price.model, amount: price.amount, currency: price.currency, interval: price.interval, trialDays: price.trialDays, perSeat: price.perSeat, fallback: price.fallback };
