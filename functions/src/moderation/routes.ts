import { defineRoute } from "../core/routes";
import type { Deps } from "../deps";
import {
  appealInputSchema,
  decisionListQuerySchema,
  decisionListSchema,
  decisionParamsSchema,
  filedAppealSchema,
  publicDecisionListSchema,
  publicDecisionQuerySchema,
  transparencyFiguresSchema,
  transparencyQuerySchema,
} from "./schemas";
import { authorDecisions, fileAppeal, publicDecisions, publisherDecisions } from "./service";
import { periodOf, transparencyFigures } from "./transparency";

/** Decisions, appeals and transparency (contract §30, the DSA's Art. 17, 20 and 24). */
export const moderationRoutes = (deps: Deps) => [
  defineRoute({
    method: "get",
    path: "/developers/decisions",
    operationId: "listPublisherDecisions",
    summary: "The moderation decisions about the publisher's modules, newest first, each with its statement of reasons and the publisher's appeal.",
    tag: "Notices",
    auth: "developer",
    query: decisionListQuerySchema,
    responses: { 200: { description: "A page of decisions.", schema: decisionListSchema } },
    handle: async ({ caller, query }) => ({ status: 200, body: await publisherDecisions(deps, caller.developer.publisherId, query) }),
  }),
  defineRoute({
    method: "get",
    path: "/users/me/decisions",
    operationId: "listMyDecisions",
    summary: "The moderation decisions about the caller's reviews, newest first, each with its statement of reasons and the caller's appeal.",
    tag: "Notices",
    auth: "user",
    query: decisionListQuerySchema,
    responses: { 200: { description: "A page of decisions.", schema: decisionListSchema } },
    handle: async ({ caller, query }) => ({ status: 200, body: await authorDecisions(deps, caller.uid, query) }),
  }),
  defineRoute({
    method: "post",
    path: "/decisions/:id/appeals",
    operationId: "appealDecision",
    summary: "Appeals a decision: the side it affects with its ID token, or the notice's reporter with the appeal token; within six months, once per side.",
    description: "A decision the caller may not appeal answers as one never made (404 not_found). Another operator than the one who decided hears the appeal; both sides are told the outcome by email.",
    tag: "Notices",
    auth: "optional",
    params: decisionParamsSchema,
    body: appealInputSchema,
    responses: { 201: { description: "Filed.", schema: filedAppealSchema } },
    problems: ["appeal_exists", "appeal_window_closed"],
    handle: async ({ caller, actor, params, body }) => ({ status: 201, body: await fileAppeal(deps, caller, actor, params.id, body) }),
  }),
  defineRoute({
    method: "get",
    path: "/transparency/decisions",
    operationId: "listPublicDecisions",
    summary: "Every moderation decision of a period (UTC days, both included), newest first, without personal data; no token needed.",
    tag: "Notices",
    auth: "none",
    query: publicDecisionQuerySchema,
    responses: { 200: { description: "A page of decisions.", schema: publicDecisionListSchema } },
    handle: async ({ query }) => ({ status: 200, body: await publicDecisions(deps, periodOf(query), query) }),
  }),
  defineRoute({
    method: "get",
    path: "/transparency/figures",
    operationId: "getTransparencyFigures",
    summary: "The transparency figures of a period (UTC days, both included, at most 366): notices, decisions, the median hours to a decision, appeals and suspensions; no token needed.",
    description: "The figures `npm run admin -- transparency --json` prints, and the /transparency page shows.",
    tag: "Notices",
    auth: "none",
    query: transparencyQuerySchema,
    responses: { 200: { description: "The figures.", schema: transparencyFiguresSchema } },
    handle: async ({ query }) => ({ status: 200, body: await transparencyFigures(deps, query) }),
  }),
];
