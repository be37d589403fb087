import { z } from "zod";
import { viewerOf } from "../accounts/caller-data";
import { mailStore, plainTextMail, type MailMessage } from "../businesses/mail-store";
import { auditLog, operatorOf, type Actor } from "../core/audit-log";
import type { Caller } from "../core/auth";
import { toIso } from "../core/documents";
import { ApiError, invalidRequest } from "../core/errors";
import { emailAddress } from "../core/schemas";
import { parseInput } from "../core/validation";
import { outboundEvent } from "../core/event-types";
import { OPERATORS } from "../core/event-outbox";
import { randomBase62, tokenHash } from "../core/secret-tokens";
import type { Deps, OperatorDeps } from "../deps";
import { listedModuleFor } from "../marketplace/service";
import { reviewStore } from "../reviews/review-store";
import { flaggerStore } from "./flagger-store";
import { noticeStore, type NoticeRecord } from "./notice-store";
import type { NoticeSource } from "./rules";
import type { noticeInputSchema } from "./schemas";

/**
 * Notices (contract §30, the DSA's Art. 16): anyone, signed in or not, tells the marketplace that a
 * module, a version or a review is illegal or breaks its terms. A notice names only what the
 * caller may see: a private module (§26) or a hidden review answers the same 404 as an id never
 * made, so notices enumerate nothing. Its text is kept as typed and shown as text.
 */

export const reviewNotFound = (reviewId: string) => new ApiError("review_not_found", `No review '${reviewId}'.`);

/** The module (and review) a notice targets, as the caller may see them; 404 as for an id never made otherwise. */
async function resolveTarget(deps: Deps, caller: Caller | null, target: z.output<typeof noticeInputSchema>["target"], now: Date) {
  const viewer = viewerOf(deps.db, caller, now);
  if ("reviewId" in target) {
    const review = await reviewStore(deps.db).anyById(target.reviewId);
    if (!review || !review.visible) throw reviewNotFound(target.reviewId);
    // A review of a module the caller may not see does not exist for them either; other failures stay what they are.
    await listedModuleFor(deps.db, review.moduleId, viewer).catch((error: unknown) => {
      throw error instanceof ApiError && error.code === "module_not_found" ? reviewNotFound(target.reviewId) : error;
    });
    return { moduleId: review.moduleId, version: null, reviewId: review.id };
  }
  const module = await listedModuleFor(deps.db, target.moduleId, viewer);
  if (target.version !== undefined && !module.versionSummary.some((entry) => entry.version === target.version && entry.publishedAt !== null)) {
    throw new ApiError("module_not_found", `Module '${target.moduleId}' has no published version '${target.version}'.`);
  }
  return { moduleId: module.id, version: target.version ?? null, reviewId: null };
}

/** POST /notices: recorded, confirmed to the reporter by email when there is an address, and queued for the operators. */
export async function receiveNotice(deps: Deps, caller: Caller | null, actor: Actor, input: z.output<typeof noticeInputSchema>) {
  const { db, clock } = deps;
  const now = clock();
  const target = await resolveTarget(deps, caller, input.target, now);
  // A signed-in reporter is named by the account; an anonymous one by what they typed, if anything.
  const reporter = {
    name: caller?.name ?? input.reporter?.name ?? null,
    email: caller?.email ?? input.reporter?.email ?? null,
    uid: caller?.uid ?? null,
  };
  if (input.category === "intellectual_property" && (!reporter.name || !reporter.email)) {
    throw invalidRequest("A notice of an intellectual property infringement names who sends it: reporter.name and reporter.email (or an account with both).", [
      { path: "reporter", message: "Required for intellectual_property: name and email." },
    ]);
  }
  const source: NoticeSource = !caller ? "anonymous" : caller.email && caller.emailVerified && (await flaggerStore(db).isTrusted(caller.email)) ? "trusted_flagger" : "signed_in";
  const appealToken = `nap_${randomBase62(40)}`;
  const notice: NoticeRecord = {
    id: `ntc_${randomBase62(20)}`,
    moduleId: target.moduleId,
    version: target.version,
    reviewId: target.reviewId,
    category: input.category,
    explanation: input.explanation,
    reporter,
    source,
    appealTokenHash: tokenHash(appealToken),
    status: "open",
    decisionId: null,
    receivedAt: now,
  };
  const answer = { id: notice.id, receivedAt: toIso(now), appealToken };
  const received = outboundEvent("moderation.notice.received", [OPERATORS], { noticeId: notice.id, category: notice.category, source, moduleId: target.moduleId, ...(target.reviewId ? { reviewId: target.reviewId } : {}) });
  await auditLog(db).commit(
    actor,
    // Filed under the notice, not the module: a module's owner reads its module's entries, and the reporter is not theirs to know.
    { action: "notice.receive", target: notice.id, details: { moduleId: target.moduleId, version: target.version, reviewId: target.reviewId, category: notice.category, source }, emits: [received], answer },
    now,
    (batch) => {
      noticeStore(db).create(batch, notice);
      if (reporter.email) mailStore(db).queueIn(batch, confirmation(reporter.email, notice), now);
    },
  );
  return answer;
}

function confirmation(to: string, notice: NoticeRecord): MailMessage {
  const what = notice.reviewId ? `a review of ${notice.moduleId}` : notice.version ? `${notice.moduleId} ${notice.version}` : notice.moduleId;
  const text = [
    `We received your notice ${notice.id} about ${what} (${notice.category.replaceAll("_", " ")}).`,
    "",
    "The marketplace's operators will decide on it and tell you what they decided and why. If you disagree with their decision, you may appeal it within six months with the appeal token you were shown when you sent the notice.",
  ].join("\n");
  return plainTextMail(to, `Your notice ${notice.id} was received`, text);
}

/** Operators: a notice as the queue shows it (the reporter included: operators decide with it). */
export const noticeView = (notice: NoticeRecord) => ({
  id: notice.id,
  status: notice.status,
  source: notice.source,
  category: notice.category,
  target: notice.reviewId ? { moduleId: notice.moduleId, reviewId: notice.reviewId } : { moduleId: notice.moduleId, version: notice.version },
  explanation: notice.explanation,
  reporter: notice.reporter,
  receivedAt: toIso(notice.receivedAt),
  decisionId: notice.decisionId,
});

const noticeListInput = z.object({
  status: z.enum(["open", "decided"]).default("open"),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

/** Operators: `notices list`: open ones by default, trusted flaggers' first, then oldest first. */
export async function listNotices(deps: OperatorDeps, input: { status?: string; limit?: string }) {
  const { status, limit } = parseInput(noticeListInput, input);
  return (await noticeStore(deps.db).queue(status, limit)).map(noticeView);
}

/** Operators: `notices show <id>`. */
export async function showNotice(deps: OperatorDeps, id: string) {
  const notice = await noticeStore(deps.db).get(id);
  if (!notice) throw new ApiError("not_found", `No notice '${id}'.`);
  return noticeView(notice);
}

/** Operators: `flaggers add|remove <email>`, `flaggers list` (an audit entry each change). */
export async function setTrustedFlagger(deps: OperatorDeps, email: string, trusted: boolean) {
  const address = parseInput(emailAddress(), email, `'${email}' is not an email address.`).toLowerCase();
  const now = deps.clock();
  await auditLog(deps.db).commit(operatorOf(deps), { action: trusted ? "flagger.add" : "flagger.remove", target: address }, now, (batch) => flaggerStore(deps.db).setIn(batch, address, trusted, operatorOf(deps).id, now));
  return { email: address, trusted };
}

export async function listTrustedFlaggers(deps: OperatorDeps) {
  return (await flaggerStore(deps.db).list()).map((flagger) => ({ ...flagger, addedAt: toIso(flagger.addedAt) }));
}
