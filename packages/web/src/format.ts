const dateFormat = new Intl.DateTimeFormat("en", { year: "numeric", month: "short", day: "numeric", timeZone: "UTC" });

/** A day, as people read it ("Nov 23, 2026"), from an RFC 3339 time; UTC, as the API counts days. */
export const formatDate = (iso: string | null | undefined) => (iso ? dateFormat.format(new Date(iso)) : "—");

export const formatCount = (count: number) => new Intl.NumberFormat("en").format(count);

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
