/**
 * Reading a request's Cookie header (RFC 6265's `name=value; name=value`), for the one cookie the
 * API reads (§28's visitor) and for what the local site lets through to it, as Hosting does.
 */

const pairsOf = (header: string | undefined) =>
  (header ?? "")
    .split(";")
    .map((part) => part.trim())
    .filter((part) => part.includes("="))
    .map((part) => [part.slice(0, part.indexOf("=")), part.slice(part.indexOf("=") + 1)] as const);

/** The value of the first cookie of that name, or null. */
export function cookieValue(header: string | undefined, name: string): string | null {
  return pairsOf(header).find(([key]) => key === name)?.[1] ?? null;
}

/** The header with only the cookies of that name (null when none is left). */
export function onlyCookie(header: string | undefined, name: string): string | null {
  const kept = pairsOf(header).filter(([key]) => key === name);
  return kept.length > 0 ? kept.map(([key, value]) => `${key}=${value}`).join("; ") : null;
}
