import { createMarketplaceClient, type MarketplaceClient } from "@marketplace/client";
import { DesktopError, offline, problemError } from "./errors";

/** Tries of one request: the first and two retries (§29). */
const MAX_TRIES = 3;
/** The longest Retry-After honoured; a longer one ends the call with the service's answer. */
const MAX_RETRY_AFTER_MS = 60_000;
/** Between tries after a network failure, or an answer without Retry-After. */
const DEFAULT_WAIT_MS = 1_000;

export interface Transport {
  api: MarketplaceClient;
  /** `fetch` with the SDK's retries, for URLs outside the API (signed Storage URLs, TUF targets). */
  fetch: typeof fetch;
}

/**
 * The typed client (@marketplace/client) over a `fetch` that retries what may be retried: a
 * network failure, and the answers §1 marks as "retry" (503 `unavailable`, 429 `rate_limited`, 409
 * `request_in_progress` with Retry-After), at most three tries in all, waiting Retry-After (up to
 * 60 s). A POST keeps its Idempotency-Key across the tries, so a retry never does the work twice.
 */
export function transport(options: { apiBase: string; fetch: typeof fetch; token: () => Promise<string> }): Transport {
  const retrying = async (input: Request | string | URL, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    for (let attempt = 1; ; attempt += 1) {
      let response: Response;
      try {
        response = await options.fetch(attempt < MAX_TRIES ? request.clone() : request);
      } catch (error) {
        if (request.signal.aborted) throw new DesktopError("cancelled", "Cancelled.", { cause: error });
        if (attempt >= MAX_TRIES) throw offline(`${new URL(request.url).host} cannot be reached.`, error);
        await wait(DEFAULT_WAIT_MS, request.signal);
        continue;
      }
      const retryAfter = retryAfterMs(response);
      if (retryAfter === null || attempt >= MAX_TRIES || retryAfter > MAX_RETRY_AFTER_MS) return response;
      await response.body?.cancel();
      await wait(retryAfter, request.signal);
    }
  };
  const api = createMarketplaceClient({ baseUrl: options.apiBase, token: options.token, fetch: retrying as typeof fetch, retries: 0 });
  return { api, fetch: retrying as typeof fetch };
}

/** How long to wait before trying again, or null when the answer is final. */
function retryAfterMs(response: Response): number | null {
  const header = response.headers.get("Retry-After");
  const seconds = header === null ? NaN : Number(header);
  const given = Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : null;
  if (response.status === 503 || response.status === 429) return given ?? DEFAULT_WAIT_MS;
  // 409 request_in_progress says "retry shortly" with a Retry-After; without one, the change stands.
  if (response.status === 409 && given !== null) return given;
  return null;
}

function wait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new DesktopError("cancelled", "Cancelled."));
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => (clearTimeout(timer), reject(new DesktopError("cancelled", "Cancelled."))), { once: true });
  });
}

/** The answer's data, or its problem as a DesktopError. */
export function answerOf<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.data !== undefined && result.response.ok) return result.data;
  throw problemError(result.response.status, result.error);
}
