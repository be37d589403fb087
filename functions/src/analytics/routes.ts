import { defineRoute, type Reply } from "../core/routes";
import { viewerOf } from "../accounts/caller-data";
import type { Deps } from "../deps";
import { publisherOf } from "../publishing/publisher";
import { metricsQuerySchema, metricsSchema, moduleMetricsParamsSchema, pageViewParamsSchema } from "./schemas";
import { moduleMetrics, publisherMetrics, recordPageView, VISITOR_COOKIE, VISITOR_COOKIE_NAME, type MetricsReply } from "./service";
import { cookieValue } from "../core/cookies";

/** Analytics (contract §28): the module page's view, and the publisher's figures. */

const YEAR_SECONDS = 365 * 24 * 3600;

/** The visitor cookie of a request, when it carries a well-formed one. */
function visitorCookie(header: string | undefined): string | null {
  const value = cookieValue(header, VISITOR_COOKIE_NAME);
  return value !== null && VISITOR_COOKIE.test(value) ? value : null;
}

const reply = (answer: MetricsReply): Reply => ("csv" in answer ? { status: 200, media: { data: answer.csv, type: "text/csv; charset=utf-8; header=present" } } : { status: 200, body: answer.json });

/** The query with the answer's format: as `format` says, else CSV when the request accepts text/csv and not JSON. */
const withFormat = <Q extends { format?: "json" | "csv" }>(query: Q, accept: string | undefined): Q & { format: "json" | "csv" } => ({
  ...query,
  format: query.format ?? (accept && /text\/csv/.test(accept) && !/application\/json/.test(accept) ? "csv" : "json"),
});

export const analyticsRoutes = (deps: Deps) => [
  defineRoute({
    method: "post",
    path: "/modules/:id/views",
    operationId: "recordModulePageView",
    summary: "Counts a view of a module's page: at most once per visitor and UTC day; known crawlers are not counted (§28).",
    tag: "Marketplace",
    auth: "optional",
    params: pageViewParamsSchema,
    // Counted at most once per visitor and day by its nature: a repeat changes nothing.
    idempotencyKey: false,
    responses: { 204: { description: "Counted, or not (a repeat, a crawler); sets the __session cookie when the request had none.", headers: { "Set-Cookie": "__session=<random id>; Max-Age=31536000; Path=/; HttpOnly; SameSite=Lax (Secure when deployed)" } } },
    problems: ["module_not_found"],
    handle: async ({ params, caller, req }) => {
      const visitor = { uid: caller?.uid ?? null, cookie: visitorCookie(req.headers.cookie), address: req.ip ?? "", userAgent: req.get("user-agent") ?? "" };
      const cookie = await recordPageView(deps, params.id, visitor, viewerOf(deps.db, caller, deps.clock()));
      const secure = deps.config.publicBaseUrl.startsWith("https:") ? "; Secure" : "";
      const headers: Record<string, string> = cookie ? { "Set-Cookie": `${VISITOR_COOKIE_NAME}=${cookie}; Max-Age=${YEAR_SECONDS}; Path=/; HttpOnly; SameSite=Lax${secure}` } : {};
      return { status: 204, headers };
    },
  }),
  defineRoute({
    method: "get",
    path: "/developers/modules/:id/metrics",
    operationId: "getModuleMetrics",
    summary: "One of the caller's modules' analytics per day, week or month: downloads, installs, uninstalls, active devices, page views, purchases, trials and money, optionally split by version or platform; CSV on request (§28).",
    tag: "Developers",
    auth: "developer",
    publisherTokens: true,
    params: moduleMetricsParamsSchema,
    query: metricsQuerySchema,
    responses: { 200: { description: "The series and totals (or their CSV).", schema: metricsSchema } },
    problems: ["not_owner", "module_not_found"],
    handle: async ({ caller, actor, params, query, req }) => reply(await moduleMetrics(deps, publisherOf(caller, actor), params.id, withFormat(query, req.get("accept")))),
  }),
  defineRoute({
    method: "get",
    path: "/developers/metrics",
    operationId: "getPublisherMetrics",
    summary: "The same analytics over all of the caller's modules (§28).",
    tag: "Developers",
    auth: "developer",
    publisherTokens: true,
    query: metricsQuerySchema,
    responses: { 200: { description: "The series and totals (or their CSV).", schema: metricsSchema } },
    handle: async ({ caller, actor, query, req }) => reply(await publisherMetrics(deps, publisherOf(caller, actor), withFormat(query, req.get("accept")))),
  }),
];


