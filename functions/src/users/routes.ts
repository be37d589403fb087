import { loadCallerData } from "../accounts/caller-data";
import { defineRoute } from "../core/routes";
import type { Deps } from "../deps";
import { userProfileSchema } from "./schemas";
import { fallbackVersionsOfPurchases, getProfile } from "./service";
import { joinThroughSso } from "../sso/service";

export const userRoutes = (deps: Deps) => [
  defineRoute({
    method: "get",
    path: "/users/me",
    signedAnswers: true,
    operationId: "getMyProfile",
    summary: "The caller's profile, effective entitlements with their sources, businesses and activations; a single sign-on with just-in-time membership makes the caller a member first (§22).",
    tag: "Users",
    auth: "user",
    responses: { 200: { description: "The profile.", schema: userProfileSchema } },
    handle: async ({ caller }) => {
      await joinThroughSso(deps, caller);
      const now = deps.clock();
      const data = await loadCallerData(deps.db, caller, now);
      return { status: 200, body: getProfile(caller, data, now, await fallbackVersionsOfPurchases(deps.db, data.access)) };
    },
  }),
];
