/** `reviews`: ratings and reviews people reported, and hiding them. */
import type { Command } from "commander";
import { reportedReviews, setReviewHidden } from "../../../functions/src/reviews/service";
import { type Cli } from "../cli";

export function registerReviewCommands(program: Command, { action }: Cli): void {
  const reviews = program.command("reviews").description("ratings and reviews: what people reported, and hiding");
  reviews
    .command("reported")
    .description("reviews people reported, most recently reported first")
    .option("--limit <n>", "at most this many (default 100)")
    .action(action((ctx, options: { limit?: string }) => reportedReviews(ctx, options)));
  reviews
    .command("hide")
    .description("takes a review out of the list and the figures (an audit entry)")
    .argument("<moduleId>")
    .argument("<reviewId>")
    .requiredOption("--reason <text>")
    .action(action((ctx, moduleId: string, reviewId: string, options: { reason: string }) => setReviewHidden(ctx, { moduleId, reviewId, reason: options.reason }, true)));
  reviews
    .command("unhide")
    .description("shows a hidden review again")
    .argument("<moduleId>")
    .argument("<reviewId>")
    .action(action((ctx, moduleId: string, reviewId: string) => setReviewHidden(ctx, { moduleId, reviewId }, false)));
}
