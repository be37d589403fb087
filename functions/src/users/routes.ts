import { loadCallerData } from "../accounts/caller-data";
import { defineRoute } from "../core/routes";
import type { Deps } from "../deps";
import { userProfileSchema } from "./schemas";
import { getProfile } from "./service";

export const userRoutes = ({ db, clock }: Deps) => [
  defineRoute({
    method: "get",
    path: "/users/me",
    signedAnswers: true,
    operationId: "getMyProfile",
    summary: "The caller's profile, effective entitlements with their sources, businesses and activations.",
    tag: "Users",
    auth: "user",
    responses: { 200: { description: "The profile.", schema: userProfileSchema } },
    handle: async ({ caller }) => {
      const now = clock();
      return { status: 200, body: getProfile(caller, await loadCallerData(db, caller.uid, now), now) };
    },
  }),
];
