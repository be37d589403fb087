import { createMarketplaceClient, type components, type Problem } from "@marketplace/client";

/**
 * The API of this same site (`/api/v1`, a Hosting rewrite to the function; `npm start` serves
 * both): the pages never call another origin.
 */
const baseUrl = `${location.origin}/api/v1`;

/** Anonymous reads: the marketplace and module pages, answered from shared caches. */
export const publicApi = createMarketplaceClient({ baseUrl });

/** A client that sends the signed-in publisher's Firebase ID token. */
export const signedInApi = (idToken: () => Promise<string>) => createMarketplaceClient({ baseUrl, token: idToken });

export type SignedInApi = ReturnType<typeof signedInApi>;
export type Schemas = components["schemas"];

/** Why a call failed, in words for the page: the problem's detail, else its title, else the status. */
export function problemText(error: unknown, response?: Response): string {
  const problem = error as Partial<Problem> | undefined;
  if (problem && typeof problem === "object" && (problem.detail || problem.title)) {
    const fields = (problem.errors ?? []).map((field) => `${field.path}: ${field.message}`);
    return [problem.detail ?? problem.title, ...fields].join(" ");
  }
  return response ? `The service answered ${response.status}.` : "The service could not be reached.";
}

/** The data of a call, or an Error carrying the API's own explanation. */
export async function dataOf<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let result: { data?: T; error?: unknown; response: Response };
  try {
    result = await call;
  } catch {
    throw new Error("The service could not be reached. Check the connection and try again.");
  }
  if (result.error !== undefined || result.data === undefined) {
    if (result.response.ok && result.error === undefined) return undefined as T;
    throw new Error(problemText(result.error, result.response));
  }
  return result.data;
}

/**
 * The data of a call, or null when it answered the problem `code`: an expected absence (no
 * payouts account yet, not a publisher yet). Any other failure throws, as with dataOf.
 */
export async function dataUnless<T>(code: string, call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T | null> {
  const result = await call.catch(() => {
    throw new Error("The service could not be reached. Check the connection and try again.");
  });
  if ((result.error as Partial<Problem> | undefined)?.code === code) return null;
  return dataOf(Promise.resolve(result));
}

/** An icon address of the API, as a path of this site (the API names it absolutely). */
export const sitePath = (url: string) => {
  const parsed = new URL(url, location.origin);
  return `${parsed.pathname}${parsed.search}`;
};
