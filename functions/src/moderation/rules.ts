/**
 * The words and pure rules of §30's decisions (the DSA's Art. 17, 20 and 24): what an operator
 * may decide, on which ground, how long an appeal stays open, and the transparency figures.
 */

export const DECISION_KINDS = ["no_action", "restrict_visibility", "remove", "suspend_publisher"] as const;
export type DecisionKind = (typeof DECISION_KINDS)[number];

/** Illegal under a law, or incompatible with the marketplace's terms (Art. 17(3)(d)–(e)). */
export const DECISION_GROUNDS = ["law", "terms"] as const;
export type DecisionGround = (typeof DECISION_GROUNDS)[number];

export const CONTENT_TYPES = ["module", "review"] as const;
export type ContentType = (typeof CONTENT_TYPES)[number];

/** Who appeals: the side the decision affects (publisher or review author), or the notice's reporter. */
export const APPEAL_SIDES = ["affected", "reporter"] as const;
export type AppealSide = (typeof APPEAL_SIDES)[number];

export const APPEAL_OUTCOMES = ["upheld", "reversed"] as const;
export type AppealOutcome = (typeof APPEAL_OUTCOMES)[number];
export type AppealStatus = "open" | AppealOutcome;

/** The decisions a review can take: it is removed (§18's hiding) or left; restriction and suspension concern modules and publishers. */
export const REVIEW_DECISIONS: readonly DecisionKind[] = ["no_action", "remove"];

/** Art. 20(1): an appeal may be lodged for at least six months after the decision. */
export function appealOpenUntil(decidedAt: Date): Date {
  const until = new Date(decidedAt);
  until.setUTCMonth(until.getUTCMonth() + 6);
  // 31 August plus six months is 28 February, not 3 March.
  if (until.getUTCDate() !== decidedAt.getUTCDate()) until.setUTCDate(0);
  return until;
}

/** The median of some numbers (the mean of the middle two for an even count), or null for none. */
export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** Counts of each word, every word present (0 when none): the figures keyed by the contract's words. */
export function countBy<W extends string>(words: readonly W[], values: readonly W[]): Record<W, number> {
  const counts = Object.fromEntries(words.map((word) => [word, 0])) as Record<W, number>;
  for (const value of values) if (value in counts) counts[value] += 1;
  return counts;
}

const DAY_MS = 86_400_000;

/** A period of whole UTC days, `from` and `to` (YYYY-MM-DD) both included, as [start, end). */
export function dayRange(from: string, to: string): { start: Date; end: Date } {
  return { start: new Date(`${from}T00:00:00.000Z`), end: new Date(new Date(`${to}T00:00:00.000Z`).getTime() + DAY_MS) };
}
