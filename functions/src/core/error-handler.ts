import { randomUUID } from "node:crypto";
import type { Socket } from "node:net";
import type { ErrorRequestHandler, Request, RequestHandler } from "express";
import { RETRY_AFTER_SECONDS } from "./deadline";
import { NO_STORE } from "./http-cache";
import { ApiError, internalError, invalidRequest, unavailable } from "./errors";
import type { Logger } from "./logger";

/** Anything under /api/v1 that no route matched. */
export const unknownRoute: RequestHandler = (req, _res, next) =>
  next(new ApiError("not_found", `No endpoint ${req.method} ${req.baseUrl}${req.path}.`));

/**
 * The one error handler: every error, from any layer, leaves as application/problem+json with the
 * contract's `code`. Unexpected errors are logged with their stack and answered as a bare 500.
 */
export function problemErrorHandler(logger: Logger): ErrorRequestHandler {
  return (error, req, res, next) => {
    const problem = toApiError(error, req, logger);
    if (res.headersSent) return next(error);
    res
      .status(problem.status)
      .set({ "Cache-Control": NO_STORE, ...problem.headers })
      .type("application/problem+json")
      .send(problemBody(problem, req.requestId));
  };
}

function problemBody(problem: ApiError, requestId: string): string {
  return JSON.stringify({
    type: "about:blank",
    title: problem.title,
    status: problem.status,
    code: problem.code,
    detail: problem.detail,
    requestId,
    ...(problem.errors ? { errors: problem.errors } : {}),
    ...problem.extensions,
  });
}

/**
 * For an http.Server's `clientError`: requests Node's HTTP parser refuses (a bad method, CR or LF
 * in a header, no Host) never reach the app; answer them with a problem too, then close.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === "ECONNRESET" || !socket.writable) {
    socket.destroy();
    return;
  }
  const problem =
    error.code === "HPE_HEADER_OVERFLOW"
      ? new ApiError("headers_too_large", "The request headers are too large.")
      : invalidRequest("The request is not valid HTTP/1.1.");
  const requestId = randomUUID();
  const body = problemBody(problem, requestId);
  socket.end(
    `HTTP/1.1 ${problem.status} ${problem.title}\r\nContent-Type: application/problem+json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** gRPC statuses (Firestore) of a backend that is down, overloaded, or lost a contended transaction: DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, ABORTED, UNAVAILABLE. */
const GRPC_UNAVAILABLE = new Set([4, 8, 10, 14]);
/** A transaction Firestore gave up on under contention (its locks timed out): INVALID_ARGUMENT with one of these messages, which the client does not retry itself. */
const GRPC_INVALID_ARGUMENT = 3;
const LOST_TRANSACTION = /transaction is invalid or closed|transaction has expired|no longer valid/i;
/** HTTP statuses of a REST backend (Cloud Storage) that is overloaded or failing. */
const HTTP_UNAVAILABLE = new Set([429, 500, 502, 503, 504]);
/** A connection to a backend refused, reset or cut mid-request (an upload answered EPIPE). */
const CONNECTION_FAILURES = new Set(["ECONNREFUSED", "ECONNRESET", "ECONNABORTED", "EPIPE", "ETIMEDOUT", "ESOCKETTIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "EAI_AGAIN"]);

/** Whether an error is a backend's passing failure, which a later retry may not meet: answered 503 with Retry-After, never 500. */
export function isBackendUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === GRPC_INVALID_ARGUMENT && LOST_TRANSACTION.test(String((error as Error).message))) return true;
  return typeof code === "number" ? GRPC_UNAVAILABLE.has(code) || HTTP_UNAVAILABLE.has(code) : typeof code === "string" && CONNECTION_FAILURES.has(code);
}

function toApiError(error: unknown, req: Request, logger: Logger): ApiError {
  if (error instanceof ApiError) return error;
  // Express's own client errors, e.g. a path parameter that is not valid percent-encoding.
  const status = (error as { status?: number }).status;
  if (status === 400 && (error instanceof URIError || (error as { expose?: boolean }).expose)) {
    return invalidRequest("The request URL is malformed (not valid percent-encoding).");
  }
  if (isBackendUnavailable(error)) {
    logger.warn("backend unavailable", { requestId: req.requestId, path: req.path, error: (error as Error).message });
    return unavailable("A backend is unavailable; retry later.", RETRY_AFTER_SECONDS);
  }
  logger.error("unhandled error", {
    requestId: req.requestId,
    method: req.method,
    path: req.path,
    error: error instanceof Error ? (error.stack ?? error.message) : String(error),
  });
  return internalError();
}
