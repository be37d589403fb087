import { DAY_MS } from "../core/time";

/** The daily check of verified domains (§22), as pure rules. */

/** How often a verified domain's TXT record is checked again. */
export const DOMAIN_CHECK_EVERY_MS = DAY_MS;
/** A TXT record missing this long, check after check, releases the domain. */
export const DOMAIN_RELEASED_AFTER_MS = 7 * DAY_MS;

export type RecheckOutcome =
  /** The record is there: the domain stays, and a missing streak ends. */
  | { kind: "held" }
  /** Missing: `first` when this begins the streak (the owners are emailed then). */
  | { kind: "missing"; first: boolean; since: Date }
  /** Missing for 7 days in a row: the domain is released. */
  | { kind: "released"; since: Date };

/** What one check's finding does to a domain missing since `missingSince` (null: found last time). */
export function recheckOutcome(missingSince: Date | null, found: boolean, now: Date): RecheckOutcome {
  if (found) return { kind: "held" };
  const since = missingSince ?? now;
  if (now.getTime() - since.getTime() >= DOMAIN_RELEASED_AFTER_MS) return { kind: "released", since };
  return { kind: "missing", first: missingSince === null, since };
}
