import { defineRoute, type AnyRoute } from "../core/routes";
import type { Deps } from "../deps";
import { healthSchema, jwksSchema, openApiDocumentSchema } from "./schemas";

/** Service endpoints; `openApiDocument` is built from every route, these included. */
export const serviceRoutes = ({ signingKeys }: Deps, openApiDocument: () => unknown): AnyRoute[] => [
  defineRoute({
    method: "get",
    path: "/health",
    operationId: "getHealth",
    summary: "Liveness of the service.",
    tag: "Service",
    auth: "none",
    responses: { 200: { description: "The service is up.", schema: healthSchema } },
    handle: async () => ({ status: 200, body: { status: "ok" } }),
  }),
  defineRoute({
    method: "get",
    path: "/openapi.json",
    operationId: "getOpenApiDocument",
    summary: "The OpenAPI 3.1 document of this API.",
    tag: "Service",
    auth: "none",
    responses: { 200: { description: "The document.", schema: openApiDocumentSchema } },
    cache: "public",
    handle: async () => ({ status: 200, body: openApiDocument() }),
  }),
  defineRoute({
    method: "get",
    path: "/signing-keys",
    operationId: "getSigningKeys",
    summary: "Public keys (JWKS) that verify module signatures.",
    tag: "Service",
    auth: "none",
    responses: { 200: { description: "The key set.", schema: jwksSchema } },
    cache: "public",
    handle: async () => ({ status: 200, body: signingKeys.jwks() }),
  }),
];
