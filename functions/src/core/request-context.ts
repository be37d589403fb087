import { randomUUID } from "node:crypto";
import type { NextFunction, Request, Response } from "express";
import { invalidRequest } from "./errors";
import type { Logger } from "./logger";

const REQUEST_ID_HEADER = "X-Request-Id";
const ACCEPTABLE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

declare module "express-serve-static-core" {
  interface Request {
    requestId: string;
  }
}

/** The caller's X-Request-Id when it is a sane token, else a new one. */
export const requestIdFor = (incoming: string | undefined): string => (incoming && ACCEPTABLE_REQUEST_ID.test(incoming) ? incoming : randomUUID());

/**
 * Echoes the caller's X-Request-Id when it is a sane token, else assigns a new one. It also sets
 * `caller` (none yet), so that every request object gets the API's properties in one order
 * whatever its route: objects of one shape keep Node's HTTP code optimised, where a property
 * added on some routes only made it deoptimise ("wrong map") and run slower on others.
 */
export function requestId(req: Request, res: Response, next: NextFunction): void {
  req.requestId = requestIdFor(req.get(REQUEST_ID_HEADER));
  req.caller = null;
  res.setHeader(REQUEST_ID_HEADER, req.requestId);
  next();
}

/** One structured log line per request: no query string, headers or body, so no secrets. */
export function requestLog(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    res.on("finish", () => {
      logger.info("request", {
        requestId: req.requestId,
        method: req.method,
        path: req.originalUrl.split("?")[0],
        status: res.statusCode,
        durationMs: Number((process.hrtime.bigint() - started) / 1_000_000n),
        uid: req.caller?.uid,
      });
    });
    next();
  };
}

/** HTTP/1.1 requires a Host header (RFC 9112 §3.2); a request without one is refused as a problem. */
export function requireHost(req: Request, _res: Response, next: NextFunction): void {
  if (req.httpVersion === "1.1" && !req.headers.host) return next(invalidRequest("An HTTP/1.1 request needs a Host header."));
  next();
}
