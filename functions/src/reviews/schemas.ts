import { z } from "zod";
import { pageQuery } from "../core/pagination";
import { isoDateTime, oneLine } from "../core/schemas";
import { moduleIdSchema } from "../marketplace/schemas";
import { REVIEW_SORTS } from "./review-store";

/** Plain text, trimmed; an empty one is none. A title is one line; a body may have several. */
const text = (max: number, lines: "one" | "many") =>
  z
    .string()
    .max(max * 2)
    .transform((value) => value.trim())
    .pipe(lines === "one" ? oneLine(z.string().max(max, `at most ${max} characters`)) : z.string().max(max, `at most ${max} characters`))
    .transform((value) => (value === "" ? null : value));

export const reviewModuleParamsSchema = z.strictObject({ id: moduleIdSchema });
export const reviewParamsSchema = z.strictObject({ id: moduleIdSchema, reviewId: z.string().max(24).regex(/^rev_[0-9A-Za-z]{20}$/, "Not a review id.") });

export const reviewInputSchema = z.strictObject({
  rating: z.number().int().min(1).max(5),
  title: text(100, "one").optional(),
  body: text(2_000, "many").optional(),
});

export const replyInputSchema = z.strictObject({ body: z.string().trim().min(1, "must not be empty").max(2_000) });
export const reportInputSchema = z.strictObject({ reason: oneLine(z.string().trim().min(1, "must not be empty").max(500)) });

export const reviewListQuerySchema = z
  .strictObject({
    ...pageQuery,
    sort: z.enum(REVIEW_SORTS).default("newest"),
    rating: z
      .enum(["1", "2", "3", "4", "5"])
      .transform(Number)
      .optional()
      .meta({ description: "Only reviews of this many stars (§24), newest first." }),
    replied: z
      .enum(["true", "false"])
      .transform((value) => value === "true")
      .optional()
      .meta({ description: "false: only reviews the publisher has not answered; true: only answered ones (§24), newest first." }),
  })
  .refine((query) => query.sort === "newest" || (query.rating === undefined && query.replied === undefined), {
    message: "With rating or replied, reviews come newest first: leave sort out.",
    path: ["sort"],
  });

export const reviewSchema = z
  .object({
    id: z.string(),
    rating: z.number().int(),
    title: z.string().nullable(),
    body: z.string().nullable().meta({ description: "Plain text: show it escaped, never as HTML." }),
    author: z.object({ displayName: z.string().nullable() }),
    version: z.string().meta({ description: "The version the author had activated when they wrote it." }),
    createdAt: isoDateTime,
    updatedAt: isoDateTime,
    reply: z.object({ body: z.string(), createdAt: isoDateTime, updatedAt: isoDateTime }).optional().meta({ description: "The publisher's reply." }),
  })
  .meta({ id: "ModuleReview" });

export const ratingSummarySchema = z
  .object({
    average: z.number().nullable().meta({ description: "To one decimal; null without reviews." }),
    count: z.number().int(),
    histogram: z.object({ "1": z.number().int(), "2": z.number().int(), "3": z.number().int(), "4": z.number().int(), "5": z.number().int() }),
  })
  .meta({ id: "RatingSummary" });

export const reviewListSchema = z
  .object({ summary: ratingSummarySchema, items: z.array(reviewSchema), nextCursor: z.string().nullable() })
  .meta({ id: "ReviewList" });

export const reportedReviewsInput = z.object({ limit: z.coerce.number().int().min(1).max(500).default(100) });
export const hideInput = z.object({ moduleId: moduleIdSchema, reviewId: z.string().min(1), reason: z.string().trim().min(1).max(500) });
export const unhideInput = hideInput.omit({ reason: true });
