import type { Request, RequestHandler } from "express";
import { ipKeyGenerator } from "express-rate-limit";
import { rateLimited } from "./errors";

const WINDOW_MS = 60_000;

/** A key's window: the hits counted in it and when it ends (ms since the epoch). */
export interface Window {
  hits: number;
  endsAt: number;
}

/**
 * Hits per key in fixed windows that start at a key's first hit, as express-rate-limit's
 * MemoryStore counts them. A key idle for two windows is forgotten (the maps rotate once a window),
 * so memory holds only the keys seen lately.
 */
export class WindowCounter {
  private previous = new Map<string, Window>();
  private current = new Map<string, Window>();
  private rotatesAt: number;

  constructor(
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.rotatesAt = now() + windowMs;
  }

  /** Counts a hit of `key`: its window, with this hit counted. */
  hit(key: string): Window {
    const now = this.now();
    if (now >= this.rotatesAt) {
      this.previous = this.current;
      this.current = new Map();
      this.rotatesAt = now + this.windowMs;
    }
    let window = this.current.get(key);
    if (!window) {
      window = this.previous.get(key) ?? { hits: 0, endsAt: 0 };
      this.previous.delete(key);
      this.current.set(key, window);
    }
    if (window.endsAt <= now) {
      window.hits = 0;
      window.endsAt = now + this.windowMs;
    }
    window.hits += 1;
    return window;
  }

  /** How many keys are kept. */
  get size(): number {
    return this.current.size + this.previous.size;
  }
}

/**
 * Per-caller request limits, counted in memory per function instance (a burst spread over many
 * instances is limited per instance). Over the limit: 429 `rate_limited` with Retry-After.
 * No RateLimit headers on other answers: counted per instance, the remaining budget they would
 * state is not the caller's (its requests spread over instances).
 *
 * The count is synchronous and kept here rather than in express-rate-limit's middleware, whose
 * six awaits, debug calls and checks per request cost a cheap answer about a tenth of its CPU;
 * its IPv6 subnet key (`ipKeyGenerator`) is still the one used.
 */
function limiter(options: { limit: number; key: (req: Request) => string; skip?: (req: Request) => boolean }): RequestHandler {
  const counter = new WindowCounter(WINDOW_MS);
  return (req, _res, next) => {
    if (options.skip?.(req)) return next();
    const window = counter.hit(options.key(req));
    if (window.hits <= options.limit) return next();
    next(rateLimited(Math.max(1, Math.ceil((window.endsAt - Date.now()) / 1000))));
  };
}

/** The client's address as the key: an IPv6 address by its /56 network, as one household or office has. */
export function clientKey(req: Request): string {
  const ip = req.ip ?? req.socket.remoteAddress ?? "unknown";
  return ip.includes(":") ? ipKeyGenerator(ip) : ip;
}

/**
 * By client address: every request counts against `limit`, except those `separately` picks out,
 * which count against `separateLimit` instead (the desktop app's update reports, §19: a whole
 * office behind one address reports each update).
 */
export const perIpRateLimit = (limit: number, separate?: { limit: number; picks: (req: Request) => boolean }): RequestHandler => {
  if (!separate) return limiter({ limit, key: clientKey });
  const general = limiter({ limit, key: clientKey });
  const picked = limiter({ limit: separate.limit, key: clientKey });
  return (req, res, next) => (separate.picks(req) ? picked : general)(req, res, next);
};

/** By user, for authenticated requests (mounted after authentication). */
export const perUserRateLimit = (limit: number) => limiter({ limit, key: (req) => `uid:${req.caller!.uid}`, skip: (req) => !req.caller });
