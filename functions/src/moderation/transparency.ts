import type { z } from "zod";
import { invalidRequest } from "../core/errors";
import { parseInput } from "../core/validation";
import type { Deps } from "../deps";
import { noticeStore } from "../notices/notice-store";
import { NOTICE_CATEGORIES, NOTICE_SOURCES } from "../notices/rules";
import { appealStore } from "./appeal-store";
import { decisionStore } from "./decision-store";
import { countBy, dayRange, DECISION_GROUNDS, DECISION_KINDS, median } from "./rules";
import { transparencyQuerySchema, type transparencyFiguresSchema } from "./schemas";

/**
 * The transparency figures (contract §30, the DSA's Art. 15 and 24) of a period of whole UTC days:
 * notices by category and by who sent them, decisions by kind and ground, the median hours from a
 * notice to its decision, the appeals filed and where they stand, the publishers suspended. Read
 * from the records themselves each time (projections and counts), so they equal what happened;
 * a period is at most 366 days, which bounds the read.
 */

const MAX_DAYS = 366;
const HOUR_MS = 3_600_000;

/** A period's days, checked: from ≤ to, at most 366 days. */
export function periodOf(input: { from?: unknown; to?: unknown }) {
  const { from, to } = parseInput(transparencyQuerySchema, input);
  const { start, end } = dayRange(from, to);
  if (start >= end) throw invalidRequest("from is after to.", [{ path: "from", message: "Must not be after to." }]);
  if (end.getTime() - start.getTime() > MAX_DAYS * 24 * HOUR_MS) throw invalidRequest(`A period is at most ${MAX_DAYS} days.`, [{ path: "to", message: `At most ${MAX_DAYS} days after from.` }]);
  return { from, to, start, end };
}

export async function transparencyFigures({ db }: Pick<Deps, "db">, input: { from?: unknown; to?: unknown }): Promise<z.output<typeof transparencyFiguresSchema>> {
  const { from, to, start, end } = periodOf(input);
  const [notices, decisions, appeals] = await Promise.all([noticeStore(db).countedBetween(start, end), decisionStore(db).figuresBetween(start, end), appealStore(db).countsFiledBetween(start, end)]);
  const hours = median(decisions.map((decision) => (decision.decidedAt.getTime() - decision.noticeReceivedAt.getTime()) / HOUR_MS));
  const byKind = countBy(DECISION_KINDS, decisions.map((decision) => decision.decision));
  return {
    from,
    to,
    notices: { byCategory: countBy(NOTICE_CATEGORIES, notices.map((notice) => notice.category)), bySource: countBy(NOTICE_SOURCES, notices.map((notice) => notice.source)) },
    decisions: { byKind, byGround: countBy(DECISION_GROUNDS, decisions.map((decision) => decision.ground)) },
    medianHoursToDecision: hours === null ? null : Math.round(hours * 10) / 10,
    appeals,
    suspensions: byKind.suspend_publisher,
  };
}
