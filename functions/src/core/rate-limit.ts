import type { NextFunction, Request, RequestHandler, Response } from "express";
import { rateLimit } from "express-rate-limit";
import { rateLimited } from "./errors";

const WINDOW_MS = 60_000;

/**
 * Per-caller request limits, counted in memory per function instance (a burst spread over many
 * instances is limited per instance). Over the limit: 429 `rate_limited` with Retry-After.
 * No RateLimit headers on other answers: counted per instance, the remaining budget they would
 * state is not the caller's (its requests spread over instances), and writing them cost every
 * answer about a tenth of its time.
 */
function limiter(options: { limit: number; key?: (req: Request) => string; skip?: (req: Request) => boolean }): RequestHandler {
  return rateLimit({
    windowMs: WINDOW_MS,
    limit: options.limit,
    standardHeaders: false,
    legacyHeaders: false,
    ...(options.key ? { keyGenerator: options.key } : {}),
    ...(options.skip ? { skip: options.skip } : {}),
    handler: (req: Request, _res: Response, next: NextFunction) => {
      const resetTime = (req as Request & { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
      const retryAfter = resetTime ? Math.max(1, Math.ceil((resetTime.getTime() - Date.now()) / 1000)) : 60;
      next(rateLimited(retryAfter));
    },
  });
}

/**
 * By client address: every request counts against `limit`, except those `separately` picks out,
 * which count against `separateLimit` instead (the desktop app's update reports, §19: a whole
 * office behind one address reports each update).
 */
export const perIpRateLimit = (limit: number, separate?: { limit: number; picks: (req: Request) => boolean }): RequestHandler => {
  if (!separate) return limiter({ limit });
  const general = limiter({ limit, skip: separate.picks });
  const picked = limiter({ limit: separate.limit, skip: (req) => !separate.picks(req) });
  return (req, res, next) => (separate.picks(req) ? picked : general)(req, res, next);
};

/** By user, for authenticated requests (mounted after authentication). */
export const perUserRateLimit = (limit: number) =>
  limiter({ limit, key: (req) => `uid:${req.caller!.uid}`, skip: (req) => !req.caller });
