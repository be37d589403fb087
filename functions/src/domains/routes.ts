import { businessParamsSchema } from "../businesses/schemas";
import { defineRoute } from "../core/routes";
import type { Deps } from "../deps";
import { domainListSchema, domainParamsSchema, domainSchema, newDomainSchema } from "./schemas";
import { addDomain, listDomains, removeDomain, verifyDomain } from "./service";

/** A business's verified domains (contract §22), for its owners. */
export const domainRoutes = (deps: Deps) => [
  defineRoute({
    method: "post",
    path: "/businesses/:businessId/domains",
    operationId: "addDomain",
    summary: "Adds a domain to verify, with the TXT record that verifies it (owners); the same record when asked again.",
    tag: "Enterprise",
    auth: "user",
    params: businessParamsSchema,
    body: newDomainSchema,
    responses: { 201: { description: "The pending domain.", schema: domainSchema } },
    problems: ["business_not_found", "not_business_admin", "sso_required", "too_many_domains"],
    handle: async ({ caller, actor, params, body }) => ({ status: 201, body: await addDomain(deps, caller, actor, params.businessId, body.domain) }),
  }),
  defineRoute({
    method: "get",
    path: "/businesses/:businessId/domains",
    operationId: "listDomains",
    summary: "The business's domains, pending and verified (owners).",
    tag: "Enterprise",
    auth: "user",
    params: businessParamsSchema,
    responses: { 200: { description: "The domains.", schema: domainListSchema } },
    problems: ["business_not_found", "not_business_admin", "sso_required"],
    handle: async ({ caller, params }) => ({ status: 200, body: await listDomains(deps, caller, params.businessId) }),
  }),
  defineRoute({
    method: "post",
    path: "/businesses/:businessId/domains/:domain/verify",
    operationId: "verifyDomain",
    summary: "Verifies a domain by its TXT record; the first business to verify a domain holds it (owners).",
    tag: "Enterprise",
    auth: "user",
    params: domainParamsSchema,
    responses: { 200: { description: "The verified domain.", schema: domainSchema } },
    problems: ["business_not_found", "not_business_admin", "sso_required", "domain_not_found", "domain_not_verified", "domain_taken"],
    handle: async ({ caller, actor, params }) => ({ status: 200, body: await verifyDomain(deps, caller, actor, params.businessId, params.domain) }),
  }),
  defineRoute({
    method: "delete",
    path: "/businesses/:businessId/domains/:domain",
    operationId: "removeDomain",
    summary: "Removes a domain, and the business's hold on it when verified (owners).",
    tag: "Enterprise",
    auth: "user",
    params: domainParamsSchema,
    responses: { 204: { description: "Removed." } },
    problems: ["business_not_found", "not_business_admin", "sso_required", "domain_not_found"],
    handle: async ({ caller, actor, params }) => {
      await removeDomain(deps, caller, actor, params.businessId, params.domain);
      return { status: 204 };
    },
  }),
];
