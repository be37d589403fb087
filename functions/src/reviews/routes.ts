import { viewerOf } from "../accounts/caller-data";
import { defineRoute } from "../core/routes";
import type { Deps } from "../deps";
import {
  replyInputSchema,
  reportInputSchema,
  reviewInputSchema,
  reviewListQuerySchema,
  reviewListSchema,
  reviewModuleParamsSchema,
  reviewParamsSchema,
  reviewSchema,
} from "./schemas";
import { deleteMyReview, listReviews, myReview, putMyReview, replyToReview, reportReview } from "./service";

/** Ratings and reviews (contract §18). */
export const reviewRoutes = (deps: Deps) => [
  defineRoute({
    method: "get",
    path: "/modules/:id/reviews",
    operationId: "listReviews",
    summary: "A module's rating figures and a page of its reviews, newest or by rating; or only those of some stars, or (un)answered.",
    tag: "Reviews",
    auth: "optional",
    params: reviewModuleParamsSchema,
    query: reviewListQuerySchema,
    responses: { 200: { description: "The figures and reviews; text is plain text, to be shown escaped.", schema: reviewListSchema } },
    problems: ["module_not_found"],
    handle: async ({ params, query, caller }) => ({ status: 200, body: await listReviews(deps, viewerOf(deps.db, caller, deps.clock()), params.id, query) }),
  }),
  defineRoute({
    method: "get",
    path: "/modules/:id/reviews/me",
    operationId: "getMyReview",
    summary: "The caller's own review of a module, to show and edit (§24).",
    tag: "Reviews",
    auth: "user",
    params: reviewModuleParamsSchema,
    responses: { 200: { description: "The review.", schema: reviewSchema } },
    problems: ["module_not_found", "not_found"],
    handle: async ({ caller, params }) => ({ status: 200, body: await myReview(deps, caller, params.id) }),
  }),
  defineRoute({
    method: "put",
    path: "/modules/:id/reviews/me",
    operationId: "putMyReview",
    summary: "Writes or replaces the caller's review of a module they activated (a verified install).",
    tag: "Reviews",
    auth: "user",
    params: reviewModuleParamsSchema,
    body: reviewInputSchema,
    responses: { 200: { description: "The review.", schema: reviewSchema } },
    problems: ["module_not_found", "not_activated"],
    handle: async ({ caller, actor, params, body }) => ({ status: 200, body: await putMyReview(deps, caller, actor, params.id, body) }),
  }),
  defineRoute({
    method: "delete",
    path: "/modules/:id/reviews/me",
    operationId: "deleteMyReview",
    summary: "Removes the caller's review of a module, if they have one.",
    tag: "Reviews",
    auth: "user",
    params: reviewModuleParamsSchema,
    responses: { 204: { description: "Removed (or there was none)." } },
    handle: async ({ caller, params }) => {
      await deleteMyReview(deps, caller.uid, params.id);
      return { status: 204 };
    },
  }),
  defineRoute({
    method: "post",
    path: "/modules/:id/reviews/:reviewId/report",
    operationId: "reportReview",
    summary: "Flags a review for the operators (once per person).",
    tag: "Reviews",
    auth: "user",
    params: reviewParamsSchema,
    body: reportInputSchema,
    responses: { 202: { description: "Recorded; the operators decide." } },
    problems: ["not_found"],
    handle: async ({ caller, actor, params, body }) => {
      await reportReview(deps, caller, actor, params.id, params.reviewId, body.reason);
      return { status: 202 };
    },
  }),
  defineRoute({
    method: "put",
    path: "/developers/modules/:id/reviews/:reviewId/reply",
    operationId: "replyToReview",
    summary: "The owner's reply to a review of their module; a new one replaces it.",
    tag: "Reviews",
    auth: "developer",
    publisherTokens: true,
    params: reviewParamsSchema,
    body: replyInputSchema,
    responses: { 200: { description: "The review with its reply.", schema: reviewSchema } },
    problems: ["module_not_found", "not_owner", "not_found"],
    handle: async ({ caller, actor, params, body }) => ({ status: 200, body: await replyToReview(deps, caller.developer, actor, params.id, params.reviewId, body.body) }),
  }),
  defineRoute({
    method: "delete",
    path: "/developers/modules/:id/reviews/:reviewId/reply",
    operationId: "deleteReviewReply",
    summary: "Removes the owner's reply to a review.",
    tag: "Reviews",
    auth: "developer",
    publisherTokens: true,
    params: reviewParamsSchema,
    responses: { 204: { description: "Removed." } },
    problems: ["module_not_found", "not_owner", "not_found"],
    handle: async ({ caller, actor, params }) => {
      await replyToReview(deps, caller.developer, actor, params.id, params.reviewId, null);
      return { status: 204 };
    },
  }),
];
