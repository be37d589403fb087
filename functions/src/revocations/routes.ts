import { defineRoute, type AnyRoute } from "../core/routes";
import type { Deps } from "../deps";
import { signedRevocationListSchema } from "./schemas";
import { signedRevocationList } from "./service";

/** `GET /revocations`: the signed list the desktop app checks before loading any module, even offline. */
export const revocationRoutes = (deps: Deps): AnyRoute[] => [
  defineRoute({
    method: "get",
    path: "/revocations",
    signedAnswers: true,
    operationId: "getRevocations",
    summary: "The signed list of revoked module versions; its serial grows at every change and it expires within 7 days.",
    tag: "Marketplace",
    auth: "none",
    responses: { 200: { description: "The list, as a compact JWS.", schema: signedRevocationListSchema } },
    cache: "public",
    handle: async () => ({ status: 200, body: await signedRevocationList(deps) }),
  }),
];
