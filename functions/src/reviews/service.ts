import type { Transaction } from "firebase-admin/firestore";
import { outboundEvent } from "../core/event-types";
import { OPERATORS } from "../core/event-outbox";
import type { z } from "zod";
import { activationStore } from "../accounts/activation-store";
import { assertOwnsModule } from "../access/policy";
import { moduleNotFound, type Viewer } from "../access/visibility";
import { viewerOf } from "../accounts/caller-data";
import { actingOwner } from "../publishing/publisher";
import { instanceQueue } from "../core/concurrency";
import { auditLog, operatorOf, type Actor } from "../core/audit-log";
import type { Caller } from "../core/auth";
import { catalogChanges, moduleChange } from "../core/catalog-changes";
import { withinDeadline } from "../core/deadline";
import { toIso } from "../core/documents";
import { readJoined, type JoinedChange } from "../core/joined-change";
import { ApiError } from "../core/errors";
import { randomBase62 } from "../core/secret-tokens";
import { parseInput } from "../core/validation";
import type { Deps, OperatorDeps } from "../deps";
import { moduleStore } from "../marketplace/module-store";
import { ratingStore, type RatingSummary } from "../marketplace/rating-store";
import { listedModuleFor, ratingView } from "../marketplace/service";
import { reviewStore, type ReviewPosition, type ReviewRecord } from "./review-store";
import { hideInput, reportedReviewsInput, unhideInput, type reviewInputSchema, type reviewListQuerySchema } from "./schemas";

/**
 * Ratings and reviews (contract §18) from verified installs: only a user who activated a module
 * reviews it. A review, its figures (rating-store.ts) and the catalog's change entry are written
 * in one transaction, so the figures are exact under any concurrency and every instance's search
 * follows within the feed's delay.
 */

const noReview = (reviewId: string) => new ApiError("not_found", `No review '${reviewId}' of this module.`);


export function reviewView(review: ReviewRecord) {
  return {
    id: review.id,
    rating: review.rating,
    title: review.title,
    body: review.body,
    author: { displayName: review.authorName },
    version: review.version,
    createdAt: toIso(review.createdAt),
    updatedAt: toIso(review.updatedAt),
    ...(review.reply ? { reply: { body: review.reply.body, createdAt: toIso(review.reply.createdAt), updatedAt: toIso(review.reply.updatedAt) } } : {}),
  };
}

/** Commits a change of a module's reviews with its catalog entry; this instance's search follows at once. */
async function commitReviewChange<T>(deps: Pick<Deps, "db">, moduleId: string, change: (tx: Transaction) => Promise<T>): Promise<T> {
  // One instance's review changes of one module take turns rather than abort one another in
  // their transactions (§1: 50 concurrent reviews of one module all get their answer).
  const result = await instanceQueue(deps.db, "reviews")(moduleId, () =>
    withinDeadline(
      "Firestore",
      deps.db.runTransaction(async (tx) => {
        const value = await change(tx);
        catalogChanges(deps.db).record(tx, moduleChange(moduleId));
        return value;
      }),
    ),
  );
  catalogChanges(deps.db).applied(moduleChange(moduleId));
  return result;
}

/** PUT /modules/:id/reviews/me: writes or replaces the caller's review (keeping its createdAt). */
export async function putMyReview(deps: Deps, caller: Caller, actor: Actor, moduleId: string, input: z.output<typeof reviewInputSchema>) {
  const { db, clock } = deps;
  const module = await listedModuleFor(deps.db, moduleId, viewerOf(db, caller, clock()));
  const activation = await withinDeadline("Firestore", activationStore(db).get(caller.uid, moduleId));
  if (!activation) throw new ApiError("not_activated", `Only people who activated '${moduleId}' may review it: confirm it in the app first.`);
  const now = clock();
  const reviews = reviewStore(db);
  const review = await commitReviewChange(deps, moduleId, async (tx) => {
    const old = reviews.read(await tx.get(reviews.ref(moduleId, caller.uid)));
    const review: ReviewRecord = {
      moduleId,
      uid: caller.uid,
      id: old?.id ?? `rev_${randomBase62(20)}`,
      rating: input.rating,
      title: input.title ?? null,
      body: input.body ?? null,
      authorName: caller.name,
      version: activation.version,
      createdAt: old?.createdAt ?? now,
      updatedAt: now,
      visible: old?.visible ?? true,
      hidden: old?.hidden ?? null,
      reply: old?.reply ?? null,
      reports: old?.reports ?? 0,
      lastReportedAt: old?.lastReportedAt ?? null,
    };
    if (review.visible && old?.rating !== review.rating) ratingStore(db).changeIn(tx, moduleId, { added: review.rating, removed: old?.visible ? old.rating : undefined });
    reviews.setIn(tx, review);
    const data = { moduleId, reviewId: review.id, rating: review.rating, path: `/modules/${moduleId}/reviews` };
    const emits = [outboundEvent(old ? "module.review.updated" : "module.review.created", [{ kind: "publisher", id: module.publisherId }], data)];
    auditLog(db).record(tx, actor, { action: old ? "review.update" : "review.create", target: moduleId, details: { reviewId: review.id, rating: review.rating }, emits }, now);
    return review;
  });
  return reviewView(review);
}

/** DELETE /modules/:id/reviews/me: removes the caller's review, if any. */
export async function deleteMyReview(deps: Deps, uid: string, moduleId: string): Promise<void> {
  const { db } = deps;
  const reviews = reviewStore(db);
  await commitReviewChange(deps, moduleId, async (tx) => {
    const old = reviews.read(await tx.get(reviews.ref(moduleId, uid)));
    if (!old) return;
    if (old.visible) ratingStore(db).changeIn(tx, moduleId, { removed: old.rating });
    reviews.deleteIn(tx, moduleId, uid);
  });
}

/** The figures as answers show them: the average to one decimal. */
export function summaryView(summary: RatingSummary) {
  return { average: ratingView(summary)?.average ?? null, count: summary.count, histogram: summary.histogram };
}

/** GET /modules/:id/reviews (public): the figures and a page of the visible reviews in one order. */
export async function listReviews(deps: Deps, viewer: Viewer, moduleId: string, query: z.output<typeof reviewListQuerySchema>) {
  const { db, cursors } = deps;
  await listedModuleFor(deps.db, moduleId, viewer);
  const filter = { rating: query.rating, replied: query.replied };
  // A cursor belongs to one order and one filter.
  const order = `reviews:${query.sort}:${query.rating ?? ""}:${query.replied ?? ""}`;
  const after = query.cursor ? (cursors.decodeKey(order, query.cursor) as ReviewPosition) : undefined;
  if (after && (after.length !== 3 || typeof after[0] !== "number" || typeof after[1] !== "number" || typeof after[2] !== "string")) {
    throw new ApiError("invalid_request", "The cursor is not one this API returned.");
  }
  const [summary, page] = await Promise.all([ratingStore(db).summary(moduleId), reviewStore(db).page(moduleId, query.sort, query.limit, after, filter)]);
  const last = page.reviews.at(-1);
  return {
    summary: summaryView(summary),
    items: page.reviews.map(reviewView),
    nextCursor: page.more && last ? cursors.encodeKey(order, [last.rating, last.createdAt.getTime(), last.id]) : null,
  };
}

/** The caller's own review of a listed module (shown to them even when an operator hid it). */
export async function myReview(deps: Deps, caller: Caller, moduleId: string) {
  await listedModuleFor(deps.db, moduleId, viewerOf(deps.db, caller, deps.clock()));
  const review = await reviewStore(deps.db).mine(moduleId, caller.uid);
  if (!review) throw new ApiError("not_found", `You have not reviewed '${moduleId}'.`);
  return reviewView(review);
}

/** The owner's reply to a review: PUT writes it (keeping its createdAt), DELETE (body null) removes it. */
export async function replyToReview(deps: Deps, developer: { id: string; publisherId: string }, actor: Actor, moduleId: string, reviewId: string, body: string | null) {
  const { db, clock } = deps;
  const [module, owner] = await Promise.all([moduleStore(db).getModule(moduleId), actingOwner(db, developer, moduleId)]);
  if (!module) throw moduleNotFound(moduleId);
  assertOwnsModule(moduleId, module, owner.id);
  const now = clock();
  const reviews = reviewStore(db);
  const review = await commitReviewChange(deps, moduleId, async (tx) => {
    const found = await reviews.byId(moduleId, reviewId, tx);
    if (!found) throw noReview(reviewId);
    const changed: ReviewRecord = { ...found, reply: body === null ? null : { body, createdAt: found.reply?.createdAt ?? now, updatedAt: now } };
    reviews.setIn(tx, changed);
    auditLog(db).record(tx, actor, { action: body === null ? "review.reply.delete" : "review.reply", target: moduleId, details: { reviewId } }, now);
    return changed;
  });
  return reviewView(review);
}

/** POST /modules/:id/reviews/:reviewId/report: anyone signed in flags a review for operators, once. */
export async function reportReview(deps: Deps, caller: Caller, actor: Actor, moduleId: string, reviewId: string, reason: string): Promise<void> {
  const { db, clock } = deps;
  const uid = caller.uid;
  const reviews = reviewStore(db);
  await listedModuleFor(deps.db, moduleId, viewerOf(db, caller, clock()));
  await withinDeadline(
    "Firestore",
    db.runTransaction(async (tx) => {
      const found = await reviews.byId(moduleId, reviewId, tx);
      if (!found || !found.visible) throw noReview(reviewId);
      const now = clock();
      if (!(await reviews.reportIn(tx, found, uid, reason, now))) return;
      const reported = outboundEvent("module.review.reported", [OPERATORS], { moduleId, reviewId, reports: found.reports + 1, path: `/modules/${moduleId}/reviews` });
      auditLog(db).record(tx, actor, { action: "review.report", target: moduleId, details: { reviewId, reason }, emits: [reported] }, now);
    }),
  );
}

/** Operators: the reviews people reported, most recently reported first. */
export async function reportedReviews(deps: OperatorDeps, input: z.input<typeof reportedReviewsInput>) {
  const { limit } = parseInput(reportedReviewsInput, input);
  return (await withinDeadline("Firestore", reviewStore(deps.db).reported(limit))).map((review) => ({
    moduleId: review.moduleId,
    reviewId: review.id,
    rating: review.rating,
    title: review.title,
    reports: review.reports,
    lastReportedAt: review.lastReportedAt ? toIso(review.lastReportedAt) : null,
    hidden: !review.visible,
  }));
}

/**
 * Operators: hides a review (out of the list and the figures) or shows it again, with an audit
 * entry; a moderation decision (§30) joins its change to it.
 */
export async function setReviewHidden(deps: OperatorDeps, input: z.input<typeof hideInput> | z.input<typeof unhideInput>, hide: boolean, joined?: JoinedChange) {
  const { db, clock } = deps;
  const { moduleId, reviewId, reason } = hide ? parseInput(hideInput, input) : { ...parseInput(unhideInput, input), reason: undefined };
  const now = clock();
  const reviews = reviewStore(db);
  const actor = operatorOf(deps);
  await commitReviewChange(deps, moduleId, async (tx) => {
    const writeJoined = await readJoined(tx, joined);
    const found = await reviews.byId(moduleId, reviewId, tx);
    if (!found) throw noReview(reviewId);
    if (found.visible !== !hide) {
      if (hide) ratingStore(db).changeIn(tx, moduleId, { removed: found.rating });
      else ratingStore(db).changeIn(tx, moduleId, { added: found.rating });
      reviews.setIn(tx, { ...found, visible: !hide, hidden: hide ? { reason: reason!, at: now, by: actor.id } : null });
      auditLog(db).record(tx, actor, { action: hide ? "review.hide" : "review.unhide", target: moduleId, details: { reviewId, ...(reason ? { reason } : {}) } }, now);
    }
    writeJoined(tx);
  });
  return { moduleId, reviewId, hidden: hide };
}
