import corsMiddleware from "cors";
import express, { Router, type Express, type RequestHandler } from "express";
import { activationRoutes } from "./activations/routes";
import { billingRoutes } from "./billing/routes";
import { paymentRoutes } from "./payments/routes";
import { businessRoutes } from "./businesses/routes";
import { answerSignatures } from "./core/answer-signatures";
import { ACCESS_TOKEN_PREFIX, tokenVerifier } from "./core/auth";
import { requestDeadlines } from "./core/deadline";
import { idempotencyKeys } from "./core/idempotency";
import { problemErrorHandler, unknownRoute } from "./core/error-handler";
import { perIpRateLimit, perUserRateLimit } from "./core/rate-limit";
import { requestId, requestLog, requireHost } from "./core/request-context";
import { inTurn, routeDispatcher, type AnyRoute } from "./core/routes";
import { loadConfig } from "./config";
import type { Deps } from "./deps";
import { buildOpenApiDocument } from "./openapi";
import { developerRoutes } from "./developers/routes";
import { authenticateAccessToken } from "./developers/access-tokens";
import { requireDeveloper } from "./developers/accounts";
import { publishingRoutes } from "./publishing/routes";
import { auditRoutes } from "./audit/routes";
import { authorKeyRoutes } from "./author-keys/routes";
import { trustedPublishingRoutes } from "./trusted-publishing/routes";
import { authenticatePublishToken } from "./trusted-publishing/service";
import { revocationRoutes } from "./revocations/routes";
import { reviewRoutes } from "./reviews/routes";
import { moduleRoutes } from "./marketplace/routes";
import { modulePageRoutes } from "./module-pages/routes";
import { releaseRoutes } from "./releases/routes";
import { serviceRoutes } from "./system/routes";
import { subscriptionRoutes } from "./subscriptions/routes";
import { userRoutes } from "./users/routes";
import { webhookRoutes } from "./webhooks/routes";
import { domainRoutes } from "./domains/routes";
import { policyRoutes } from "./policy/routes";
import { analyticsRoutes } from "./analytics/routes";
import { privateModuleRoutes } from "./private-modules/routes";
import { scimProtocol } from "./scim/protocol";
import { scimRoutes } from "./scim/routes";
import { ssoRoutes } from "./sso/routes";
import { tufRoutes } from "./tuf/routes";
import { traderRoutes } from "./traders/routes";
import { noticeRoutes } from "./notices/routes";
import { moderationRoutes } from "./moderation/routes";

export const API_PREFIX = "/api/v1";
export const API_VERSION = "1.0.0";

/** Every route of the API, in the order of the contract. */
export function apiRoutes(deps: Deps): AnyRoute[] {
  let openApiDocument: Record<string, unknown> | undefined;
  const routes: AnyRoute[] = [
    ...moduleRoutes(deps),
    ...modulePageRoutes(deps),
    ...reviewRoutes(deps),
    ...activationRoutes(deps),
    ...userRoutes(deps),
    ...subscriptionRoutes(deps),
    ...businessRoutes(deps),
    ...billingRoutes(deps),
    ...paymentRoutes(deps),
    ...releaseRoutes(deps),
    ...developerRoutes(deps),
    ...publishingRoutes(deps),
    ...trustedPublishingRoutes(deps),
    ...authorKeyRoutes(deps),
    ...auditRoutes(deps),
    ...revocationRoutes(deps),
    ...webhookRoutes(deps),
    ...scimRoutes(deps),
    ...domainRoutes(deps),
    ...policyRoutes(deps),
    ...privateModuleRoutes(deps),
    ...analyticsRoutes(deps),
    ...ssoRoutes(deps),
    ...tufRoutes(deps),
    ...traderRoutes(deps),
    ...noticeRoutes(deps),
    ...moderationRoutes(deps),
    ...serviceRoutes(deps, () => (openApiDocument ??= buildOpenApiDocument(routes, API_VERSION))),
  ];
  return routes;
}

/**
 * The OpenAPI document as `GET /openapi.json` serves it, from the route table alone: building it
 * touches no backend (for the document's tests and the typed client's generation).
 */
export function routeTableDocument(): Record<string, unknown> {
  return buildOpenApiDocument(apiRoutes({ config: loadConfig({ GCLOUD_PROJECT: "route-table" }) } as Deps), API_VERSION);
}

/** The Express app of the API, built from its dependencies; the function and local runs share it. */
export function createApp(deps: Deps): Express {
  const { config, logger } = deps;
  const routes = apiRoutes(deps);
  const app = express();
  app.disable("x-powered-by");
  // Strong ETags are set where answers may be shared (core/http-cache.ts), nowhere else.
  app.set("etag", false);
  app.set("trust proxy", config.trustProxyHops);

  const cors = corsFor(config.corsOrigins, routes);
  const dispatch = routeDispatcher(
    routes,
    {
      tokens: tokenVerifier(deps.auth, config.revocationCheckMs),
      afterAuth: perUserRateLimit(config.rateLimit.perUserPerMinute),
      requireDeveloper: (caller) => requireDeveloper(deps.db, caller),
      publisherTokens: (bearer) => (bearer.startsWith(ACCESS_TOKEN_PREFIX) ? authenticateAccessToken(deps, bearer) : authenticatePublishToken(deps, bearer)),
      signAnswers: answerSignatures(deps.signingKeys, deps.clock, logger),
      maxJsonBytes: config.maxJsonBytes,
      cachePolicy: config.cache,
      idempotency: idempotencyKeys(deps),
    },
    API_PREFIX,
  );
  // What every request passes, as one middleware: Express's router would match each layer's path
  // again for nothing, which cost a cheap answer about a seventh of its CPU (42 → 36 µs measured).
  app.use(
    inTurn([
      requestId,
      requestLog(logger),
      requireHost,
      requestDeadlines(config.deadlines),
      ...(cors ? [cors] : []),
      perIpRateLimit(config.rateLimit.perIpPerMinute, { limit: config.reportsPerIpPerMinute, picks: (req) => req.method === "POST" && req.path === `${API_PREFIX}/updates/reports` }),
      // SCIM (§22) answers everything under its prefix in its own form, malformed paths included.
      Router().use(`${API_PREFIX}/scim/v2`, scimProtocol(deps)),
      dispatch,
    ]),
  );
  app.use(API_PREFIX, unknownRoute);
  app.use(unknownRoute);
  app.use(problemErrorHandler(logger));
  return app;
}

/** CORS for the configured origins, or none. */
function corsFor(origins: string[], routes: AnyRoute[]): RequestHandler | null {
  if (origins.length === 0) return null;
  return corsMiddleware({
    origin: origins,
    methods: servedMethods(routes),
    allowedHeaders: ["Authorization", "Content-Type", "X-Request-Id", "X-Author-Signature", "Accept-Signature", "Idempotency-Key"],
    exposedHeaders: ["X-Request-Id", "Retry-After", "Location", "Content-Digest", "Signature", "Signature-Input", "Idempotency-Replayed"],
    maxAge: 600,
  });
}

/** What CORS preflights advertise: the methods some route serves (HEAD wherever GET is). */
function servedMethods(routes: AnyRoute[]): string[] {
  const methods = new Set(routes.map((route) => route.method.toUpperCase()));
  if (methods.has("GET")) methods.add("HEAD");
  return [...methods].sort();
}
