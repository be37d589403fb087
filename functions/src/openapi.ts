import { z } from "zod";
import { takesIdempotencyKey, type AnyRoute } from "./core/routes";
import { PROBLEM_STATUS, type ProblemCode } from "./core/errors";
import { problemSchema } from "./core/schemas";

type JsonSchema = Record<string, unknown>;

/** Codes any route may answer with. */
const COMMON_PROBLEMS: ProblemCode[] = ["rate_limited", "internal", "unavailable"];

const IDEMPOTENCY_KEY_PARAMETER = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description:
    "Safe retries: a repeat with the same key and body within 24 hours gets the first answer again (with `Idempotency-Replayed: true`) without the work being done twice, also after a 503. Another body: 422 idempotency_key_reused; the first still running: 409 request_in_progress.",
  schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x20-\\x7e]+$" },
};

/**
 * The OpenAPI 3.1 document of the API, generated from the same route declarations and zod
 * schemas that Express mounts and validates with. Schemas with a `meta({ id })` become components.
 */
export function buildOpenApiDocument(routes: AnyRoute[], version: string): Record<string, unknown> {
  const components: Record<string, JsonSchema> = {};
  const toSchema = (schema: z.ZodType, io: "input" | "output"): JsonSchema => {
    const generated = z.toJSONSchema(schema, { target: "draft-2020-12", io, unrepresentable: "any" });
    // Schemas with an id come out under $defs; they belong under components/schemas.
    const relinked = JSON.parse(
      JSON.stringify(generated).replaceAll('"#/$defs/', '"#/components/schemas/'),
    ) as JsonSchema & { $defs?: Record<string, JsonSchema>; $schema?: string };
    const { $defs, $schema: _dialect, ...rest } = relinked;
    Object.assign(components, $defs);
    return rest;
  };
  toSchema(problemSchema, "output");

  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = route.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
    paths[path] ??= {};
    paths[path][route.method] = {
      operationId: route.operationId,
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      tags: [route.tag],
      security: securityOf(route),
      parameters: [...parametersOf(route.params, "path", toSchema), ...parametersOf(route.query, "query", toSchema), ...(takesIdempotencyKey(route) ? [IDEMPOTENCY_KEY_PARAMETER] : [])],
      ...requestBodyOf(route, toSchema),
      responses: { ...successResponses(route, toSchema), ...problemResponses(route) },
    };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Marketplace API",
      version,
      description: "Modules marketplace, profiles and entitlements, subscriptions, installer releases and developer publishing. Errors are RFC 9457 problem details with a stable `code`.",
      license: { name: "Proprietary: for the desktop app, its module developers and operators", identifier: "LicenseRef-Proprietary" },
    },
    servers: [{ url: "/api/v1" }],
    paths,
    components: {
      schemas: components,
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", bearerFormat: "Firebase ID token" },
        accessToken: { type: "http", scheme: "bearer", bearerFormat: "mpt_… publisher access token (/developers/modules* only)" },
        publishToken: { type: "http", scheme: "bearer", bearerFormat: "mpo_… OIDC publish token of trusted publishing (its modules only, 15 minutes)" },
      },
    },
  };
}

function securityOf(route: AnyRoute): Record<string, string[]>[] {
  if (route.auth === "none") return [];
  if (route.auth === "optional") return [{}, { bearer: [] }];
  if (route.publisherTokens) return [{ bearer: [] }, { accessToken: [] }, { publishToken: [] }];
  return [{ bearer: [] }];
}

function parametersOf(
  schema: z.ZodType | undefined,
  location: "path" | "query",
  toSchema: (schema: z.ZodType, io: "input") => JsonSchema,
): Record<string, unknown>[] {
  if (!(schema instanceof z.ZodObject)) return [];
  return Object.entries(schema.shape as Record<string, z.ZodType>).map(([name, field]) => ({
    name,
    in: location,
    required: location === "path" || !field.safeParse(undefined).success,
    schema: toSchema(field, "input"),
  }));
}

function requestBodyOf(route: AnyRoute, toSchema: (schema: z.ZodType, io: "input") => JsonSchema) {
  if (route.body) {
    return { requestBody: { required: true, content: { "application/json": { schema: toSchema(route.body, "input") } } } };
  }
  if (route.rawBody) {
    return {
      requestBody: {
        required: true,
        description: route.rawBody.description,
        content: Object.fromEntries(
          route.rawBody.contentTypes.map((type) => [type, { schema: { type: "string", contentMediaType: type } }]),
        ),
      },
    };
  }
  return {};
}

function successResponses(route: AnyRoute, toSchema: (schema: z.ZodType, io: "output") => JsonSchema) {
  const replayed = takesIdempotencyKey(route) ? { "Idempotency-Replayed": "\"true\" when this is the first answer to the same Idempotency-Key, sent again." } : {};
  return Object.fromEntries(
    Object.entries(route.responses).map(([status, response]) => [
      status,
      {
        description: response.description,
        ...(response.headers || takesIdempotencyKey(route)
          ? {
              headers: Object.fromEntries(
                Object.entries({ ...response.headers, ...replayed }).map(([name, description]) => [name, { description, schema: { type: "string" } }]),
              ),
            }
          : {}),
        ...(response.schema ? { content: { [response.mediaType ?? "application/json"]: { schema: toSchema(response.schema, "output") } } } : {}),
      },
    ]),
  );
}

function problemResponses(route: AnyRoute) {
  const byStatus: Record<number, string[]> = {};
  const add = (...codes: ProblemCode[]) => {
    for (const code of codes) {
      const status = PROBLEM_STATUS[code];
      byStatus[status] = [...new Set([...(byStatus[status] ?? []), code])];
    }
  };
  if (route.params || route.query || route.body || route.rawBody) add("invalid_request");
  if (route.auth !== "none") add("unauthenticated", "invalid_token", "token_revoked", "user_disabled");
  if (route.auth === "developer") add("not_a_developer");
  if (route.body || route.rawBody) add("payload_too_large", "unsupported_media_type");
  if (takesIdempotencyKey(route)) add("invalid_request", "request_in_progress", "idempotency_key_reused");
  add(...(route.problems ?? []), ...COMMON_PROBLEMS);
  return Object.fromEntries(
    Object.entries(byStatus).map(([status, codes]) => [
      status,
      {
        description: `Problem: ${codes.join(", ")}.`,
        content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } },
      },
    ]),
  );
}
