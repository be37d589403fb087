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
}

/**
 * A typed client of the Marketplace API (openapi-fetch over the generated `paths`): every path,
 * parameter, body and answer is checked by TypeScript against the OpenAPI document.
 *
 *   const api = createMarketplaceClient({ baseUrl, token: () => user.getIdToken() });
 *   const { data, error } = await api.GET("/modules/download/{id}", { params: { path: { id } } });
 */
export function createMarketplaceClient(options: ClientOptions) {
  const client = createClient<paths>({ baseUrl: options.baseUrl.replace(/\/+$/, ""), fetch: options.fetch });
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
