import type { ErrorRequestHandler, Request, RequestHandler } from "express";
import { ApiError, internalError, invalidRequest, notFound } from "./errors";
import type { Logger } from "./logger";

/** Anything under /api/v1 that no route matched. */
export const unknownRoute: RequestHandler = (req, _res, next) =>
  next(notFound("not_found", `No endpoint ${req.method} ${req.baseUrl}${req.path}.`));

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
      .set(problem.headers)
      .type("application/problem+json")
      .send(
        JSON.stringify({
          type: "about:blank",
          title: problem.title,
          status: problem.status,
          code: problem.code,
          detail: problem.detail,
          requestId: req.requestId,
          ...(problem.errors ? { errors: problem.errors } : {}),
        }),
      );
  };
}

function toApiError(error: unknown, req: Request, logger: Logger): ApiError {
  if (error instanceof ApiError) return error;
  // Express's own client errors, e.g. a path parameter that is not valid percent-encoding.
  const status = (error as { status?: number }).status;
  if (status === 400 && (error as { expose?: boolean }).expose) return invalidRequest("The request URL is malformed.");
  logger.error("unhandled error", {
    requestId: req.requestId,
    method: req.method,
    path: req.path,
    error: error instanceof Error ? (error.stack ?? error.message) : String(error),
  });
  return internalError();
}
