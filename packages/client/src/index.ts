import createClient from "openapi-fetch";
import type { components, paths } from "./schema";

export type { components, operations, paths } from "./schema";

/** An RFC 9457 problem as every error of the API is answered: `code` is stable, for programs. */
export type Problem = components["schemas"]["Problem"];

export interface ClientOptions {
  /** The API's base URL, ending in /api/v1 (locally http://127.0.0.1:5001/api/v1). */
  baseUrl: string;
  /** The Bearer token to send, if any: a Firebase ID token, or on /developers/modules* an access token (mpt_…). */
  token?: () => string | null | undefined | Promise<string | null | undefined>;
  fetch?: typeof globalThis.fetch;
  /**
   * How many times an answer of 503 (`unavailable`, "retry later") is retried, after its
   * Retry-After (at most 10 s). Default 2; 0 turns it off. A retry is safe: every POST carries an
   * Idempotency-Key (its own, or a new UUID), and the retry sends the same one (contract §1).
   */
  retries?: number;
}

const MAX_RETRY_WAIT_MS = 10_000;

/**
 * A typed client of the Marketplace API (openapi-fetch over the generated `paths`): every path,
 * parameter, body and answer is checked by TypeScript against the OpenAPI document.
 *
 *   const api = createMarketplaceClient({ baseUrl, token: () => user.getIdToken() });
 *   const { data, error } = await api.GET("/modules/download/{id}", { params: { path: { id } } });
 */
export function createMarketplaceClient(options: ClientOptions) {
  const client = createClient<paths>({ baseUrl: options.baseUrl.replace(/\/+$/, ""), fetch: retrying(options.fetch ?? globalThis.fetch, options.retries ?? 2) });
  client.use({
    onRequest({ request }) {
      if (request.method === "POST" && !request.headers.has("Idempotency-Key")) request.headers.set("Idempotency-Key", crypto.randomUUID());
      return request;
    },
  });
  const { token } = options;
  if (token) {
    client.use({
      async onRequest({ request }) {
        const value = await token();
        if (value) request.headers.set("Authorization", `Bearer ${value}`);
        return request;
      },
    });
  }
  return client;
}

export type MarketplaceClient = ReturnType<typeof createMarketplaceClient>;

/** `fetch` that sends a request again, headers and body alike, while it is answered 503 and retries remain. */
function retrying(fetchOnce: typeof globalThis.fetch, retries: number) {
  return async (request: Request): Promise<Response> => {
    for (let attempt = 0; ; attempt += 1) {
      const response = await fetchOnce(attempt < retries ? request.clone() : request);
      if (response.status !== 503 || attempt >= retries) return response;
      const seconds = Number(response.headers.get("Retry-After"));
      await response.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, Math.min(Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 1000, MAX_RETRY_WAIT_MS)));
    }
  };
}
