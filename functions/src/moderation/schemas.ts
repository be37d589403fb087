import { z } from "zod";
import { isoDateTime, oneLine } from "../core/schemas";
import { pageQuery } from "../core/pagination";
import { NOTICE_CATEGORIES, NOTICE_SOURCES } from "../notices/rules";
import { APPEAL_OUTCOMES, CONTENT_TYPES, DECISION_GROUNDS, DECISION_KINDS } from "./rules";

/** Decisions, appeals and transparency (contract §30, the Digital Services Act's Art. 17, 20, 24). */

const MAX_TEXT = 5000;
const day = z.iso.date().meta({ description: "A UTC day, YYYY-MM-DD." });

/** Operators: `notices decide` (Art. 17's statement of reasons). */
export const decisionInput = z.strictObject({
  decision: z.enum(DECISION_KINDS),
  ground: z.enum(DECISION_GROUNDS),
  reference: oneLine(z.string().trim().min(1).max(300)),
  facts: z.string().trim().min(1).max(MAX_TEXT),
  automated: z.boolean().default(false),
});

/** Operators: `appeals decide`. */
export const appealDecisionInput = z.strictObject({
  outcome: z.enum(APPEAL_OUTCOMES),
  reasons: z.string().trim().min(1).max(MAX_TEXT),
});

export const appealInputSchema = z
  .strictObject({
    explanation: z.string().trim().min(20, "Say why, in at least 20 characters.").max(MAX_TEXT).meta({ description: "Why the decision should be reversed: 20–5,000 characters." }),
    appealToken: z.string().min(1).max(200).optional().meta({ description: "The reporter's appeal token (POST /notices answered it once); without it, the ID token of the side the decision affects." }),
  })
  .meta({ id: "AppealInput" });

export const filedAppealSchema = z.object({ id: z.string() }).meta({ id: "FiledAppeal" });

const appealView = z
  .object({
    id: z.string(),
    status: z.enum(["open", "upheld", "reversed"]),
    filedAt: isoDateTime,
    decidedAt: isoDateTime.nullable(),
    reasons: z.string().nullable().meta({ description: "Why the appeal was upheld or reversed, once decided." }),
  })
  .meta({ id: "DecisionAppeal" });

const decisionTarget = z.union([z.object({ moduleId: z.string(), version: z.string().nullable() }), z.object({ moduleId: z.string(), reviewId: z.string() })]);

export const decisionSchema = z
  .object({
    id: z.string(),
    noticeId: z.string(),
    target: decisionTarget,
    category: z.enum(NOTICE_CATEGORIES),
    decision: z.enum(DECISION_KINDS),
    ground: z.enum(DECISION_GROUNDS),
    reference: z.string().meta({ description: "The law's provision, or the terms' clause, the decision rests on." }),
    facts: z.string().meta({ description: "The facts and circumstances the decision rests on." }),
    automated: z.boolean().meta({ description: "Whether automated means took or detected it." }),
    decidedAt: isoDateTime,
    appealOpenUntil: isoDateTime.meta({ description: "The last moment an appeal is heard: six months after the decision." }),
    reversed: z.boolean().meta({ description: "An appeal reversed it: its effect is undone." }),
    appeal: appealView.nullable().meta({ description: "The affected side's appeal, once filed." }),
  })
  .meta({ id: "Decision" });

export const decisionListSchema = z.object({ items: z.array(decisionSchema), nextCursor: z.string().nullable() }).meta({ id: "DecisionList" });

export const decisionListQuerySchema = z.object(pageQuery);

export const publicDecisionSchema = z
  .object({
    id: z.string(),
    decision: z.enum(DECISION_KINDS),
    ground: z.enum(DECISION_GROUNDS),
    reference: z.string(),
    category: z.enum(NOTICE_CATEGORIES),
    contentType: z.enum(CONTENT_TYPES),
    automated: z.boolean(),
    decidedAt: isoDateTime,
  })
  .meta({ id: "PublicDecision" });

export const publicDecisionListSchema = z.object({ items: z.array(publicDecisionSchema), nextCursor: z.string().nullable() }).meta({ id: "PublicDecisionList" });

const period = {
  from: day.meta({ description: "The first UTC day counted (YYYY-MM-DD)." }),
  to: day.meta({ description: "The last UTC day counted (YYYY-MM-DD), at most 366 days after from." }),
};

export const publicDecisionQuerySchema = z.object({ ...period, ...pageQuery });
export const transparencyQuerySchema = z.object(period);

const counts = <T extends readonly [string, ...string[]]>(words: T) => z.object(Object.fromEntries(words.map((word) => [word, z.number().int()])) as Record<T[number], z.ZodNumber>);

export const transparencyFiguresSchema = z
  .object({
    from: day,
    to: day,
    notices: z.object({ byCategory: counts(NOTICE_CATEGORIES), bySource: counts(NOTICE_SOURCES) }),
    decisions: z.object({ byKind: counts(DECISION_KINDS), byGround: counts(DECISION_GROUNDS) }),
    medianHoursToDecision: z.number().nullable().meta({ description: "From a notice's arrival to its decision, for the decisions of the period; null without any." }),
    appeals: z.object({ upheld: z.number().int(), reversed: z.number().int(), open: z.number().int() }).meta({ description: "The appeals filed in the period, by where they stand." }),
    suspensions: z.number().int().meta({ description: "Publishers suspended by the period's decisions." }),
  })
  .meta({ id: "TransparencyFigures" });

export const decisionParamsSchema = z.object({ id: z.string().min(1).max(100) });
