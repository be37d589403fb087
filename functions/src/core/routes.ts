import type { NextFunction, Request, RequestHandler } from "express";
import findMyWay, { type HTTPMethod } from "find-my-way";
import type { z } from "zod";
import { anonymousActor, type Actor } from "./audit-log";
import { actorOf, isPublisherToken, bearerToken, idTokenCaller, requireCaller, type Caller, type DeveloperCaller, type TokenVerifier } from "./auth";
import { readBodyBytes, readJsonBody } from "./body";
import { NO_STORE, sendBody, type CachePolicy, type RouteCaching, type MediaBody } from "./http-cache";
import { ApiError, PROBLEM_STATUS, invalidRequest, methodNotAllowed, tokenError, unsupportedMediaType, type ProblemCode } from "./errors";
import type { CommitsWithChange } from "./audit-log";
import { idempotencyKeyOf, requestFingerprint, type idempotencyKeys } from "./idempotency";
import { parseInput, parseRequestPart, refuseControlCharacters } from "./validation";

/**
 * Who may call a route: anyone ("none"), anyone with an optional token ("optional"), a signed-in
 * user ("user"), or a signed-in user with a developer account ("developer").
 */
export type AuthMode = "none" | "optional" | "user" | "developer";

type CallerFor<A extends AuthMode> = A extends "none"
  ? null
  : A extends "optional"
    ? Caller | null
    : A extends "developer"
      ? DeveloperCaller
      : Caller;

export interface ResponseSpec {
  description: string;
  schema?: z.ZodType;
  /** Response headers worth documenting, e.g. Location of a redirect. */
  headers?: Record<string, string>;
  /** The media type of a body that is not JSON (its schema then describes the text). */
  mediaType?: string;
}

export interface RouteContext<P, Q, B, A extends AuthMode> {
  params: P;
  query: Q;
  body: B;
  caller: CallerFor<A>;
  /** Who acts, as the audit log names them; null on public routes; on optional ones, `anonymous` without a token. */
  actor: A extends "none" ? null : Actor;
  req: Request;
}

export interface Reply {
  status: number;
  /** A JSON body. */
  body?: unknown;
  /** A body in another media type. */
  media?: MediaBody;
  headers?: Record<string, string>;
}

/**
 * One endpoint, declared once: Express mounts it, validation uses its schemas, and the OpenAPI
 * document is generated from it, so the three cannot drift apart.
 */
export interface RouteSpec<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
  A extends AuthMode = AuthMode,
> {
  method: "get" | "post" | "put" | "patch" | "delete";
  /** Express path relative to /api/v1, e.g. "/subscriptions/:businessId". */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  auth: A;
  /** With auth "developer": a publisher token (mpt_… of §12, mpo_… of §15) may stand in for an ID token. */
  publisherTokens?: boolean;
  /** Answers carry HTTP Message Signatures (RFC 9421, contract §15): the ones the desktop app decides on. */
  signedAnswers?: boolean;
  params?: P;
  query?: Q;
  /** A JSON body, validated by this schema. */
  body?: B;
  /** A non-JSON body that the handler reads itself (the package upload), of one of these media types, up to maxBytes. */
  rawBody?: { contentTypes: string[]; description: string; maxBytes: number };
  /**
   * A POST takes an `Idempotency-Key` (core/idempotency.ts) unless this is false: for POSTs that
   * change nothing or are safe to repeat by their nature (each says why).
   */
  idempotencyKey?: false;
  /** Top-level answer fields shown only once (a token): a replay under an Idempotency-Key carries null. */
  shownOnce?: string[];
  responses: Record<number, ResponseSpec>;
  /** Shared caches may keep this route's 200 answers (core/http-cache.ts); by default nobody may. */
  cache?: RouteCaching;
  /** Problem codes this route answers with, beyond the ones every route may give. */
  problems?: ProblemCode[];
  handle(ctx: RouteContext<z.output<P>, z.output<Q>, z.output<B>, A>): Promise<Reply>;
}

// The loose type of a route once declared; `defineRoute` keeps the precise one for its handler.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyRoute = RouteSpec<any, any, any, any>;

export function defineRoute<
  P extends z.ZodType = z.ZodUndefined,
  Q extends z.ZodType = z.ZodUndefined,
  B extends z.ZodType = z.ZodUndefined,
  A extends AuthMode = AuthMode,
>(spec: RouteSpec<P, Q, B, A>): AnyRoute {
  return spec;
}

export interface RouteMiddleware {
  /** Runs after authentication, before the body is read (the per-user rate limit). */
  afterAuth: RequestHandler;
  /** Resolves the developer account of a caller, for routes with auth "developer". */
  requireDeveloper?(caller: Caller): Promise<DeveloperCaller>;
  tokens: TokenVerifier;
  /** The developer a publisher token (mpt_…, mpo_…) stands for, on routes that accept them. */
  publisherTokens?(bearer: string): Promise<DeveloperCaller>;
  /** Signs the answer of a route with `signedAnswers` (core/answer-signatures.ts). */
  signAnswers?: RequestHandler;
  maxJsonBytes: number;
  cachePolicy: CachePolicy;
  /** Safe retries of POSTs under an Idempotency-Key; without it, the header is not looked at. */
  idempotency?: ReturnType<typeof idempotencyKeys>;
}

/** Whether a route does its work once per Idempotency-Key (contract §1: every creating or changing POST). */
export const takesIdempotencyKey = (route: AnyRoute) => route.method === "post" && route.idempotencyKey !== false;

declare module "express-serve-static-core" {
  interface Request {
    caller?: Caller | null;
  }
}

/** Longer than any id; a request line is bounded by Node's header limit anyway. */
const MAX_PATH_PARAMETER_LENGTH = 8192;

/** The methods a route may declare; a HEAD request is answered by the GET route. */
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

/**
 * The API's routes as one middleware: authentication, rate limit, body, validation, handler,
 * reply; and for every known path, a 405 with `Allow` for the methods it does not serve.
 *
 * Routes are found in a radix tree (find-my-way, fastify's router) in one look-up, instead of
 * Express trying each route's pattern in turn: with some seventy routes and their 405s, that walk
 * was about a sixth of the CPU of a cheap answer in a profile. Paths match as Express matched
 * them: case-sensitive, a trailing slash ignored, parameters percent-decoded (a bad escape is a
 * 400). With a `prefix` (the API's /api/v1), other paths are passed on.
 */
export function routeDispatcher(routes: AnyRoute[], middleware: RouteMiddleware, prefix = ""): RequestHandler {
  // Parameters of any length reach their route, whose schema judges them (find-my-way's default
  // of 100 characters made a longer one a generic 404).
  const tree = findMyWay({ ignoreTrailingSlash: true, caseSensitive: true, maxParamLength: MAX_PATH_PARAMETER_LENGTH });
  const methodsByPath = new Map<string, string[]>();
  for (const route of routes) {
    const method = route.method.toUpperCase();
    methodsByPath.set(route.path, [...(methodsByPath.get(route.path) ?? []), method]);
    tree.on(method as HTTPMethod, route.path, () => undefined, { run: inTurn(routeHandlers(route, middleware)) });
  }
  const withHead = (methods: string[]) => (methods.includes("GET") ? [...methods, "HEAD"] : methods);
  // A path without parameters is refused other methods before any route is tried, so that GET
  // /modules/updates is a 405 and not taken for GET /modules/:id.
  const literalPaths = new Map([...methodsByPath].filter(([path]) => !path.includes(":")).map(([path, methods]) => [path, withHead(methods)]));

  return (req, res, next) => {
    if (prefix && !req.path.startsWith(`${prefix}/`)) return next();
    const requested = req.path.slice(prefix.length);
    const path = requested.length > 1 && requested.endsWith("/") ? requested.slice(0, -1) : requested;
    const literal = literalPaths.get(path);
    if (literal && !literal.includes(req.method)) return next(methodNotAllowed(literal));
    const method = req.method === "HEAD" ? "GET" : req.method;
    const found = (METHODS as readonly string[]).includes(method) ? tree.find(method as HTTPMethod, requested) : null;
    if (found) {
      req.params = found.params as Record<string, string>;
      void (found.store as { run: RequestHandler }).run(req, res, next);
      return;
    }
    const allowed = METHODS.filter((other) => other !== method && tree.find(other, requested));
    if (allowed.length > 0) return next(methodNotAllowed(withHead(allowed)));
    try {
      decodeURIComponent(requested);
    } catch {
      return next(invalidRequest("The path is not valid percent-encoded UTF-8."));
    }
    next();
  };
}

/** What one route runs, in order: signing, authentication and the per-user limit where it has them, then the handler. */
function routeHandlers(route: AnyRoute, middleware: RouteMiddleware): RequestHandler[] {
  const authenticate: RequestHandler = (req, _res, next) => {
    // Most anonymous reads carry no token: nothing to wait for.
    if (route.auth === "optional" && req.headers.authorization === undefined) {
      req.caller = null;
      return next();
    }
    return resolveCaller(route, req, middleware).then((caller) => {
      req.caller = caller;
      next();
    });
  };
  const parseQuery = route.query ? queryParser(route.query) : undefined;
  const keyed = takesIdempotencyKey(route) ? middleware.idempotency : undefined;
  const handle: RequestHandler = async (req, res) => {
    const params = route.params ? pathParameters(route, req.params) : undefined;
    const query = parseQuery?.(req);
    const json = route.body ? await readJsonBody(req, middleware.maxJsonBytes) : undefined;
    const body = route.body ? parseRequestPart(route.body, json, "body") : undefined;
    if (route.rawBody && !route.rawBody.contentTypes.some((type) => req.is(type))) {
      throw unsupportedMediaType(route.rawBody.contentTypes.join(" or "));
    }
    const key = keyed ? idempotencyKeyOf(req.get("idempotency-key")) : null;
    const caller = req.caller ?? null;
    const run = (commitsWith?: CommitsWithChange) => {
      const actor = caller ? actorOf(caller, req.requestId, route.auth === "developer") : route.auth === "optional" ? anonymousActor(req.requestId) : null;
      return route.handle({ params, query, body, caller, actor: actor && commitsWith ? { ...actor, commitsWith } : actor, req });
    };
    let reply: Reply;
    if (keyed && key !== null) {
      // A raw body is read here to be compared; the handler's read then finds it (core/body.ts).
      const raw = route.rawBody ? ((req as Request & { rawBody?: Buffer }).rawBody = await readBodyBytes(req, route.rawBody.maxBytes)) : undefined;
      const fingerprint = requestFingerprint(req.method, req.path, raw ?? json);
      reply = await keyed.run({ scope: caller?.uid ?? "anonymous", key, fingerprint, secrets: route.shownOnce ?? [], success: successOf(route) }, run);
    } else {
      reply = await run();
    }
    if (reply.headers) res.set(reply.headers);
    if (reply.body !== undefined || reply.media) {
      return sendBody(req, res, reply.status, reply.body, route.cache, middleware.cachePolicy, reply.media);
    }
    if (!res.get("Cache-Control")) res.set("Cache-Control", NO_STORE);
    res.status(reply.status).end();
  };
  // Signed answers are signed whatever they are, refusals included: signing comes first.
  const signing = route.signedAnswers && middleware.signAnswers ? [middleware.signAnswers] : [];
  // Public routes have no caller to find or to limit.
  return route.auth === "none" ? [...signing, handle] : [...signing, authenticate, middleware.afterAuth, handle];
}

/** A route's one success answer (status, and whether it has a body), when it has one. */
function successOf(route: AnyRoute): { status: number; body: boolean } | undefined {
  const successes = Object.entries(route.responses).filter(([status]) => status.startsWith("2"));
  if (successes.length !== 1) return undefined;
  const [[status, response]] = successes;
  return { status: Number(status), body: response.schema !== undefined };
}

/**
 * A route's path parameters. One too long for its kind of id names nothing, and is answered as
 * any unknown id is, with the route's own 404 (§1, "Text fields"); other malformed ones are a 400.
 */
function pathParameters(route: AnyRoute, raw: Request["params"]): unknown {
  refuseControlCharacters(raw, "path");
  const parsed = (route.params as z.ZodType).safeParse(raw);
  if (parsed.success) return parsed.data;
  if (parsed.error.issues.some((issue) => issue.code === "too_big")) {
    const code = route.problems?.find((problem) => PROBLEM_STATUS[problem] === 404) ?? "not_found";
    throw new ApiError(code, "Nothing has that id: it is longer than any id of its kind.");
  }
  return parseInput(route.params, raw, "The request path is invalid.");
}

/**
 * A route's query parser. Most reads carry no query string, and the parse of none is the same every
 * time: it is made once (a failure is not kept), and frozen so that no handler can change it for
 * the requests after.
 */
function queryParser(schema: z.ZodType): (req: Request) => unknown {
  let ofNone: unknown;
  return (req) => {
    if (req.url.includes("?")) return parseRequestPart(schema, req.query, "query");
    return (ofNone ??= deepFreeze(parseRequestPart(schema, {}, "query")));
  };
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/**
 * Handlers as one, run in turn as an Express router runs a route's: `next(error)`, a throw or a
 * rejection ends in the caller's `next(error)`, and the last one's `next()` in the caller's.
 * Without the router's per-layer path matching, which a chain of always-run middleware does not need.
 */
export function inTurn(handlers: RequestHandler[]): RequestHandler {
  return (req, res, done) => {
    let index = 0;
    const next: NextFunction = (error?: unknown) => {
      if (error) return done(error);
      const handler = handlers[index++];
      if (!handler) return done();
      try {
        const result = handler(req, res, next) as unknown;
        if (result instanceof Promise) result.catch(next);
      } catch (thrown) {
        next(thrown);
      }
    };
    next();
  };
}

async function resolveCaller(route: AnyRoute, req: Request, middleware: RouteMiddleware): Promise<Caller | null> {
  if (route.auth === "none") return null;
  const bearer = bearerToken(req);
  if (bearer !== null && isPublisherToken(bearer)) {
    if (!route.publisherTokens || !middleware.publisherTokens) {
      throw tokenError("invalid_token", "This endpoint needs a Firebase ID token: publisher tokens (mpt_…, mpo_…) are taken by sign, publish, yank, unyank and the module lists only.");
    }
    return middleware.publisherTokens(bearer);
  }
  // Reads may rely on a recently checked account state; anything that changes something may not.
  const caller = bearer === null ? null : await idTokenCaller(bearer, middleware.tokens, route.method === "get" ? "read" : "write");
  if (route.auth === "optional") return caller;
  const user = requireCaller(caller);
  if (route.auth === "developer") {
    if (!middleware.requireDeveloper) throw new Error(`No developer resolver for ${route.operationId}.`);
    return middleware.requireDeveloper(user);
  }
  return user;
}
