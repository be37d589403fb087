import { defineRoute } from "../core/routes";
import type { Deps } from "../deps";
import { businessParamsSchema } from "../businesses/schemas";
import { businessPublisherBodySchema, businessPublisherSchema } from "./schemas";
import { claimBusinessPublisher, getBusinessPublisher } from "./service";

/** A business's own publisher id, whose modules are private to its members (contract §26). */
export const privateModuleRoutes = (deps: Deps) => [
  defineRoute({
    method: "post",
    path: "/businesses/:businessId/publisher",
    operationId: "claimBusinessPublisher",
    summary: "Claims a publisher id for the business (owners; one per business): its owners and admins publish under it, and its modules are private to its members.",
    tag: "Businesses",
    auth: "user",
    params: businessParamsSchema,
    body: businessPublisherBodySchema,
    responses: { 201: { description: "The business's publisher id.", schema: businessPublisherSchema } },
    problems: ["business_not_found", "not_business_owner", "publisher_taken", "business_publisher_exists"],
    handle: async ({ caller, actor, params, body }) => ({ status: 201, body: await claimBusinessPublisher(deps, caller, actor, params.businessId, body) }),
  }),
  defineRoute({
    method: "get",
    path: "/businesses/:businessId/publisher",
    operationId: "getBusinessPublisher",
    summary: "The business's own publisher id (any member).",
    tag: "Businesses",
    auth: "user",
    params: businessParamsSchema,
    responses: { 200: { description: "The business's publisher id.", schema: businessPublisherSchema } },
    problems: ["business_not_found", "publisher_not_found"],
    handle: async ({ caller, params }) => ({ status: 200, body: await getBusinessPublisher(deps, caller, params.businessId) }),
  }),
];
