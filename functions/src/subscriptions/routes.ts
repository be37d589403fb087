import { defineRoute } from "../core/routes";
import type { Deps } from "../deps";
import { subscriptionParamsSchema, subscriptionStatusSchema } from "./schemas";
import { getSubscriptionStatus } from "./service";

export const subscriptionRoutes = (deps: Deps) => [
  defineRoute({
    method: "get",
    path: "/subscriptions/:businessId",
    operationId: "getSubscriptionStatus",
    summary: "Subscription status of a business the caller is a member of.",
    tag: "Subscriptions",
    auth: "user",
    params: subscriptionParamsSchema,
    responses: { 200: { description: "The subscription, with its effective status.", schema: subscriptionStatusSchema } },
    problems: ["business_not_found"],
    handle: async ({ caller, params }) => ({
      status: 200,
      body: await getSubscriptionStatus(deps, caller.uid, params.businessId),
    }),
  }),
];
