import { z } from "zod";
import { emailAddress, isoDateTime, oneLine } from "../core/schemas";
import { moduleIdSchema, versionSchema } from "../marketplace/schemas";
import { NOTICE_CATEGORIES } from "./rules";

/** Notices (contract §30, the Digital Services Act's Art. 16): anyone tells the marketplace about content they hold illegal. */

export const MIN_EXPLANATION = 20;
export const MAX_EXPLANATION = 5000;

const moduleTarget = z.strictObject({ moduleId: moduleIdSchema, version: versionSchema.optional() });
const reviewTarget = z.strictObject({ reviewId: z.string().min(1).max(100).meta({ description: "The review's id as §18 answers it (rev_…)." }) });

export const noticeInputSchema = z
  .strictObject({
    target: z.union([moduleTarget, reviewTarget]).meta({ description: "A module (or one of its versions), or a review." }),
    category: z.enum(NOTICE_CATEGORIES),
    explanation: z
      .string()
      .trim()
      .min(MIN_EXPLANATION, `Say why, in at least ${MIN_EXPLANATION} characters.`)
      .max(MAX_EXPLANATION)
      .meta({ description: `Why the content is illegal or breaks the terms: ${MIN_EXPLANATION}–${MAX_EXPLANATION} characters (shown to operators as text, never as markup).` }),
    reporter: z
      .strictObject({ name: oneLine(z.string().trim().min(1).max(200)), email: emailAddress() })
      .optional()
      .meta({ description: "Who reports, to be told what was decided; an ID token names its account instead. Needed for intellectual_property." }),
    goodFaith: z.literal(true).meta({ description: "The reporter's statement that the notice is accurate and complete, in good faith (Art. 16(2)(d))." }),
  })
  .meta({ id: "NoticeInput" });

export const receivedNoticeSchema = z
  .object({
    id: z.string(),
    receivedAt: isoDateTime,
    appealToken: z.string().nullable().meta({ description: "Shown once: lets the reporter appeal the decision (POST /decisions/:id/appeals); a replay under an Idempotency-Key answers null." }),
  })
  .meta({ id: "ReceivedNotice" });
