import { timingSafeEqual } from "node:crypto";
import type { Transaction } from "firebase-admin/firestore";
import { z } from "zod";
import { actsForBusinessPublisher } from "../access/rules";
import { memberStore } from "../accounts/member-store";
import { mailStore } from "../businesses/mail-store";
import { auditLog, operatorOf, type Actor } from "../core/audit-log";
import type { Caller } from "../core/auth";
import { toIso } from "../core/documents";
import type { CursorPosition } from "../core/pagination";
import { ApiError, invalidRequest } from "../core/errors";
import { withinDeadline } from "../core/deadline";
import { OPERATORS } from "../core/event-outbox";
import { outboundEvent } from "../core/event-types";
import type { JoinedChange } from "../core/joined-change";
import { randomBase62, tokenHash } from "../core/secret-tokens";
import { parseInput } from "../core/validation";
import type { Deps, OperatorDeps } from "../deps";
import { developerStore } from "../developers/developer-store";
import { moduleStore } from "../marketplace/module-store";
import { noticeStore } from "../notices/notice-store";
import { reviewStore } from "../reviews/review-store";
import { appealStore, type AppealRecord } from "./appeal-store";
import { decisionStore, type AppealSummary, type DecisionRecord } from "./decision-store";
import { applyEffect, commitJoined, undoEffect } from "./effects";
import { appealOpenUntil, REVIEW_DECISIONS, type AppealSide } from "./rules";
import { appealDecisionInput, decisionInput, type appealInputSchema } from "./schemas";
import { affectedEmails, appealOutcomeMail, statementToAffected, statementToReporter } from "./statements";

/**
 * Decisions and appeals (contract §30, the DSA's Art. 17 and 20). An operator decides a notice:
 * the decision, its effect (§14's revocation, §18's hiding, a restriction or a suspension), the
 * notice marked decided, the statements of reasons to both sides, `moderation.decided` and the
 * audit entry commit in one transaction, or none of them does. Either side appeals within six
 * months; another operator decides the appeal, and a reversal undoes the effect the same way.
 */

const appealListInput = z.object({
  status: z.enum(["open", "upheld", "reversed"]).default("open"),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

const noDecision = (id: string) => new ApiError("not_found", `No decision '${id}'.`);

/** Whom a decision tells by `moderation.decided`: the publisher's endpoints, when a module is what it is about. */
const decidedEvent = (decision: DecisionRecord, reversed: boolean) =>
  decision.contentType === "module"
    ? [
        outboundEvent("moderation.decided", [{ kind: "publisher", id: decision.publisherId }], {
          decisionId: decision.id,
          moduleId: decision.moduleId,
          version: decision.version,
          decision: decision.decision,
          ground: decision.ground,
          reference: decision.reference,
          reversed,
          path: "/developers/decisions",
        }),
      ]
    : [];

/** Operators: `notices decide <id>`. */
export async function decideNotice(deps: OperatorDeps, noticeId: string, input: z.input<typeof decisionInput>) {
  const { db, clock } = deps;
  const decided = parseInput(decisionInput, input);
  const notice = await noticeStore(db).get(noticeId);
  if (!notice) throw new ApiError("not_found", `No notice '${noticeId}'.`);
  if (notice.status === "decided") throw alreadyDecided(`Notice ${noticeId} is decided already (${notice.decisionId}).`);
  if (notice.reviewId && !REVIEW_DECISIONS.includes(decided.decision)) {
    throw invalidRequest(`A notice about a review is decided with ${REVIEW_DECISIONS.join(" or ")}: restrict_visibility and suspend_publisher concern modules.`, [{ path: "decision", message: `A review takes ${REVIEW_DECISIONS.join(" or ")}: restrict_visibility and suspend_publisher concern modules.` }]);
  }
  const module = await moduleStore(db).getModule(notice.moduleId);
  if (!module) throw new ApiError("module_not_found", `Module '${notice.moduleId}' is gone; the notice cannot be decided on it.`);
  const review = notice.reviewId ? await reviewStore(db).byId(notice.moduleId, notice.reviewId) : null;
  if (notice.reviewId && !review) throw new ApiError("review_not_found", `The review '${notice.reviewId}' is gone.`);
  const now = clock();
  const operator = operatorOf(deps);
  const decision: DecisionRecord = {
    id: `dec_${randomBase62(20)}`,
    noticeId,
    moduleId: notice.moduleId,
    version: notice.version,
    reviewId: notice.reviewId,
    contentType: notice.reviewId ? "review" : "module",
    category: notice.category,
    noticeSource: notice.source,
    noticeReceivedAt: notice.receivedAt,
    decision: decided.decision,
    ground: decided.ground,
    reference: decided.reference,
    facts: decided.facts,
    automated: decided.automated,
    decidedAt: now,
    decidedBy: operator.id,
    publisherId: module.publisherId,
    authorUid: review?.uid ?? null,
    appeals: { affected: null, reporter: null },
    reversedAt: null,
  };
  const affected = await affectedEmails(deps, decision);
  const joined: JoinedChange = async (tx) => {
    const current = await noticeStore(db).getIn(tx, noticeId);
    if (current?.status !== "open") throw alreadyDecided(`Notice ${noticeId} was decided meanwhile.`);
    return (writer) => {
      decisionStore(db).create(writer, decision);
      noticeStore(db).setDecision(writer, noticeId, decision.id);
      for (const to of affected) mailStore(db).queueIn(writer, statementToAffected(to, decision), now);
      if (notice.reporter.email) mailStore(db).queueIn(writer, statementToReporter(notice.reporter.email, decision), now);
      auditLog(db).record(writer, operator, { action: "notice.decide", target: decision.id, details: { noticeId, decision: decision.decision, ground: decision.ground, reference: decision.reference, moduleId: decision.moduleId }, emits: decidedEvent(decision, false) }, now);
    };
  };
  await applyEffect(deps, decision, joined);
  return decisionView(decision);
}

const alreadyDecided = (detail: string) => new ApiError("already_decided", detail);

const appealView = (summary: AppealSummary | null) =>
  summary && { id: summary.id, status: summary.status, filedAt: toIso(summary.filedAt), decidedAt: summary.decidedAt ? toIso(summary.decidedAt) : null, reasons: summary.reasons };

/** A decision as the side it affects reads it (never the reporter). */
export const decisionView = (decision: DecisionRecord) => ({
  id: decision.id,
  noticeId: decision.noticeId,
  target: decision.reviewId ? { moduleId: decision.moduleId, reviewId: decision.reviewId } : { moduleId: decision.moduleId, version: decision.version },
  category: decision.category,
  decision: decision.decision,
  ground: decision.ground,
  reference: decision.reference,
  facts: decision.facts,
  automated: decision.automated,
  decidedAt: toIso(decision.decidedAt),
  appealOpenUntil: toIso(appealOpenUntil(decision.decidedAt)),
  reversed: decision.reversedAt !== null,
  appeal: appealView(decision.appeals.affected),
});

/** A decision as the public database shows it: no facts, no names. */
export const publicDecisionView = (decision: DecisionRecord) => ({
  id: decision.id,
  decision: decision.decision,
  ground: decision.ground,
  reference: decision.reference,
  category: decision.category,
  contentType: decision.contentType,
  automated: decision.automated,
  decidedAt: toIso(decision.decidedAt),
});

type Page = { limit: number; cursor?: string };

/** One page of decisions as `view` shows them, with the cursor of the next. */
async function pageOf<View>(deps: Deps, page: Page, read: (after: CursorPosition | undefined) => Promise<{ decisions: DecisionRecord[]; more: boolean; last: CursorPosition | null }>, view: (decision: DecisionRecord) => View) {
  const found = await read(page.cursor ? deps.cursors.decode(page.cursor) : undefined);
  return { items: found.decisions.map(view), nextCursor: found.more && found.last ? deps.cursors.encode(found.last) : null };
}

/** GET /developers/decisions: the decisions about the publisher's modules, newest first. */
export const publisherDecisions = (deps: Deps, publisherId: string, page: Page) => pageOf(deps, page, (after) => decisionStore(deps.db).ofPublisher(publisherId, page.limit, after), decisionView);

/** GET /users/me/decisions: the decisions about the caller's reviews, newest first. */
export const authorDecisions = (deps: Deps, uid: string, page: Page) => pageOf(deps, page, (after) => decisionStore(deps.db).ofAuthor(uid, page.limit, after), decisionView);

/** GET /transparency/decisions: every decision of a period, newest first, without personal data. */
export const publicDecisions = (deps: Deps, period: { start: Date; end: Date }, page: Page) =>
  pageOf(deps, page, (after) => decisionStore(deps.db).decidedBetween(period.start, period.end, page.limit, after), publicDecisionView);

/**
 * Which side an appellant is: the reporter by the notice's appeal token, else the affected side by
 * its account (the review's author; the publisher's developer, or an owner or admin of a business
 * publisher). Anyone else gets the answer of a decision never made.
 */
async function sideOf(deps: Deps, caller: Caller | null, decision: DecisionRecord, appealToken: string | undefined): Promise<AppealSide> {
  if (appealToken !== undefined) {
    const notice = await noticeStore(deps.db).get(decision.noticeId);
    const given = Buffer.from(tokenHash(appealToken));
    const kept = Buffer.from(notice?.appealTokenHash ?? "");
    if (given.length === kept.length && timingSafeEqual(given, kept)) return "reporter";
    throw noDecision(decision.id);
  }
  if (!caller) throw new ApiError("unauthenticated", "Send the ID token of the account the decision affects, or the notice's appealToken.");
  if (decision.authorUid !== null) {
    if (caller.uid === decision.authorUid) return "affected";
    throw noDecision(decision.id);
  }
  const claim = await developerStore(deps.db).claim(decision.publisherId);
  if (claim && "developerId" in claim && claim.developerId === caller.uid) return "affected";
  if (claim && "businessId" in claim) {
    const member = await memberStore(deps.db).get(null, claim.businessId, caller.uid);
    if (actsForBusinessPublisher(member)) return "affected";
  }
  throw noDecision(decision.id);
}

/** POST /decisions/:id/appeals (Art. 20): one appeal per side, within six months. */
export async function fileAppeal(deps: Deps, caller: Caller | null, actor: Actor, decisionId: string, input: z.output<typeof appealInputSchema>) {
  const { db, clock } = deps;
  const decision = await decisionStore(db).get(decisionId);
  if (!decision) throw noDecision(decisionId);
  const side = await sideOf(deps, caller, decision, input.appealToken);
  const now = clock();
  if (now > appealOpenUntil(decision.decidedAt)) throw new ApiError("appeal_window_closed", `Decision ${decisionId} was made on ${toIso(decision.decidedAt).slice(0, 10)}; appeals were heard until ${toIso(appealOpenUntil(decision.decidedAt)).slice(0, 10)}.`);
  const appeal: AppealRecord = { id: `apl_${randomBase62(20)}`, decisionId, side, explanation: input.explanation, filedAt: now, status: "open", reasons: null, decidedBy: null, decidedAt: null };
  const answer = { id: appeal.id };
  const received = outboundEvent("moderation.appeal.received", [OPERATORS], { appealId: appeal.id, decisionId, side });
  await withinDeadline(
    "Firestore",
    db.runTransaction(async (tx) => {
      const current = await decisionStore(db).getIn(tx, decisionId);
      if (!current) throw noDecision(decisionId);
      if (current.appeals[side]) throw new ApiError("appeal_exists", `The ${side === "reporter" ? "reporter" : "affected side"} appealed decision ${decisionId} already (${current.appeals[side].id}).`);
      appealStore(db).set(tx, appeal);
      decisionStore(db).set(tx, { ...current, appeals: { ...current.appeals, [side]: { id: appeal.id, status: "open", filedAt: now, decidedAt: null, reasons: null } } });
      // Filed under the decision: the affected side's audit never names the reporter.
      auditLog(db).record(tx, actor, { action: "decision.appeal", target: decisionId, details: { appealId: appeal.id, side }, emits: [received], answer }, now);
    }),
  );
  return answer;
}

const appealListView = (appeal: AppealRecord) => ({
  id: appeal.id,
  decisionId: appeal.decisionId,
  side: appeal.side,
  explanation: appeal.explanation,
  status: appeal.status,
  filedAt: toIso(appeal.filedAt),
  reasons: appeal.reasons,
  decidedBy: appeal.decidedBy,
  decidedAt: appeal.decidedAt ? toIso(appeal.decidedAt) : null,
});

/** Operators: `appeals list [--status]`: open ones by default, oldest first. */
export async function listAppeals(deps: OperatorDeps, input: { status?: string; limit?: string }) {
  const { status, limit } = parseInput(appealListInput, input);
  return (await appealStore(deps.db).withStatus(status, limit)).map(appealListView);
}

/**
 * Operators: `appeals decide <id>`: by another operator than the one who decided (Art. 20(6)). A
 * reversal undoes the decision's effect (a reversed `no_action` puts the notice back in the queue)
 * in the same transaction as the outcome; both sides are told.
 */
export async function decideAppeal(deps: OperatorDeps, appealId: string, input: z.input<typeof appealDecisionInput>) {
  const { db, clock } = deps;
  const { outcome, reasons } = parseInput(appealDecisionInput, input);
  const operator = operatorOf(deps);
  const appeal = await appealStore(db).get(appealId);
  if (!appeal) throw new ApiError("not_found", `No appeal '${appealId}'.`);
  if (appeal.status !== "open") throw alreadyDecided(`Appeal ${appealId} is decided already (${appeal.status}).`);
  const decision = await decisionStore(db).get(appeal.decisionId);
  if (!decision) throw noDecision(appeal.decisionId);
  if (decision.decidedBy.toLowerCase() === operator.id.toLowerCase()) {
    throw new ApiError("same_operator", `${operator.id} made decision ${decision.id}: another operator decides its appeal.`);
  }
  const reversed = outcome === "reversed";
  if (reversed && decision.reversedAt) throw alreadyDecided(`Decision ${decision.id} is reversed already.`);
  const notice = await noticeStore(db).get(decision.noticeId);
  const now = clock();
  const decidedAppeal: AppealRecord = { ...appeal, status: outcome, reasons, decidedBy: operator.id, decidedAt: now };
  const told = [...(await affectedEmails(deps, decision)), ...(notice?.reporter.email ? [notice.reporter.email] : [])];
  const joined: JoinedChange = async (tx: Transaction) => {
    const currentAppeal = await appealStore(db).getIn(tx, appealId);
    const current = await decisionStore(db).getIn(tx, decision.id);
    if (currentAppeal?.status !== "open" || !current) throw alreadyDecided(`Appeal ${appealId} was decided meanwhile.`);
    if (reversed && current.reversedAt) throw alreadyDecided(`Decision ${decision.id} was reversed meanwhile.`);
    return (writer) => {
      appealStore(db).set(writer, decidedAppeal);
      const summary: AppealSummary = { id: appeal.id, status: outcome, filedAt: appeal.filedAt, decidedAt: now, reasons };
      decisionStore(db).set(writer, { ...current, appeals: { ...current.appeals, [appeal.side]: summary }, reversedAt: reversed ? now : current.reversedAt });
      if (reversed && decision.decision === "no_action") noticeStore(db).setDecision(writer, decision.noticeId, null);
      for (const to of told) mailStore(db).queueIn(writer, appealOutcomeMail(to, decision, decidedAppeal), now);
      auditLog(db).record(writer, operator, { action: "appeal.decide", target: decision.id, details: { appealId, outcome, side: appeal.side }, emits: reversed ? decidedEvent(decision, true) : [] }, now);
    };
  };
  if (reversed) await undoEffect(deps, decision, joined);
  else await commitJoined(deps.db, joined);
  return appealListView(decidedAppeal);
}
