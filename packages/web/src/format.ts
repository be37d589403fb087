const dateFormat = new Intl.DateTimeFormat("en", { year: "numeric", month: "short", day: "numeric", timeZone: "UTC" });

/** A day, as people read it ("Nov 23, 2026"), from an RFC 3339 time; UTC, as the API counts days. */
export const formatDate = (iso: string | null | undefined) => (iso ? dateFormat.format(new Date(iso)) : "—");

export const formatCount = (count: number) => new Intl.NumberFormat("en").format(count);

/** A count with its noun, singular for one ("1 download", "2 downloads"). */
export const countOf = (count: number, noun: string) => `${formatCount(count)} ${noun}${count === 1 ? "" : "s"}`;

/** The app versions a module version runs on, from its bounds. */
export function compatibility(min: string | null, max: string | null): string {
  if (min && max) return `${min} – ${max}`;
  if (min) return `${min} and later`;
  if (max) return `up to ${max}`;
  return "any";
}

/** A UTC day, YYYY-MM-DD, `days` from now. */
export function utcDay(days = 0, now = new Date()): string {
  return new Date(now.getTime() + days * 86_400_000).toISOString().slice(0, 10);
}

/** An amount in a currency's minor unit (cents), as people read it ("$19.00", "€5.00"). */
export function formatMoney(minor: number, currency: string): string {
  const format = new Intl.NumberFormat("en", { style: "currency", currency: currency.toUpperCase() });
  return format.format(minor / 10 ** (format.resolvedOptions().maximumFractionDigits ?? 2));
}

/** A module's price in words: "$19.00", "$5.00 a month", with "per seat" where businesses buy seats. */
export function formatPrice(price: { model: string; amount: number; currency: string; interval: string | null; perSeat: boolean; fallback?: string }): string {
  const amount = formatMoney(price.amount, price.currency);
  const period = price.model === "subscription" && price.interval ? ` a ${price.interval}` : "";
  // A perpetual fallback (§27): a year's versions stay the buyer's.
  const kept = price.fallback === "perpetual" ? " · yours to keep after a year" : "";
  return `${amount}${price.perSeat ? " per seat" : ""}${period}${kept}`;
}
