import express, { type ErrorRequestHandler, type Request, type RequestHandler, type Response, Router } from "express";
import { isBackendUnavailable } from "../core/error-handler";
import { ApiError } from "../core/errors";
import { pathNamesPrototype, pathOfKey } from "../core/validation";
import type { Deps } from "../deps";
import { createGroup, deleteGroup, getGroup, listGroups, patchGroup, replaceGroup } from "./groups";
import { parseScim } from "./patch";
import { createUser, deleteUser, getUser, listUsers, patchUser, replaceUser } from "./users";
import { resourceTypes, schemas, serviceProviderConfig } from "./discovery";
import { ScimError } from "./resources";
import { projectionQuery, SCIM_ERROR, scimListQuery } from "./schemas";
import { authenticateScim, scimBaseUrl, type ScimCaller } from "./tokens";

/**
 * SCIM 2.0 at `/api/v1/scim/v2` (contract §22, RFC 7644): its own media type, its own error form
 * (`urn:ietf:params:scim:api:messages:2.0:Error`, status as a string, scimType), and a SCIM
 * token of one business as its only credential. Described by its discovery endpoints rather
 * than the OpenAPI document.
 */

export const SCIM_MEDIA_TYPE = "application/scim+json";

const send = (res: Response, status: number, body?: unknown, headers: Record<string, string> = {}) => {
  res.status(status).set({ "Cache-Control": "no-store", ...headers });
  if (body === undefined) return res.end();
  return res.type(SCIM_MEDIA_TYPE).send(JSON.stringify(body));
};

export function scimErrorBody(status: number, detail: string, scimType: string | null) {
  return { schemas: [SCIM_ERROR], status: String(status), ...(scimType ? { scimType } : {}), detail };
}

/** The methods each known path takes, for a 405's `Allow` (RFC 9110 §15.5.6). */
const ALLOWED_METHODS: Record<string, string[]> = {
  "/ServiceProviderConfig": ["GET"],
  "/ResourceTypes": ["GET"],
  "/ResourceTypes/:id": ["GET"],
  "/Schemas": ["GET"],
  "/Schemas/:id": ["GET"],
  "/Users": ["GET", "POST"],
  "/Users/.search": ["POST"],
  "/Users/:id": ["GET", "PUT", "PATCH", "DELETE"],
  "/Groups": ["GET", "POST"],
  "/Groups/.search": ["POST"],
  "/Groups/:id": ["GET", "PUT", "PATCH", "DELETE"],
};

type Handler = (req: Request, caller: ScimCaller) => Promise<{ status: number; body?: unknown; headers?: Record<string, string> }>;

export function scimProtocol(deps: Deps): Router {
  const router = Router({ caseSensitive: false, strict: false });
  const base = () => scimBaseUrl(deps);
  const json: RequestHandler = express.json({ type: ["application/json", SCIM_MEDIA_TYPE], limit: deps.config.maxJsonBytes, strict: true });
  const route = (handler: Handler): RequestHandler[] => [
    json,
    async (req, res, next) => {
      try {
        const caller = await authenticateScim(deps, req.get("authorization"), req.requestId);
        refusePrototypeNames(req);
        const answer = await handler(req, caller);
        send(res, answer.status, answer.body, answer.headers);
      } catch (error) {
        next(error);
      }
    },
  ];
  const query = (req: Request) => parseScim(scimListQuery, req.query);
  const projection = (req: Request) => parseScim(projectionQuery, req.query);
  const ifMatch = (req: Request) => req.get("if-match");
  const resource = (status: number, found: { resource: unknown; version: string; location: string }, created = false) => ({
    status,
    body: found.resource,
    headers: { ETag: found.version, ...(created ? { Location: found.location } : {}) },
  });
  const search = (list: typeof listUsers): Handler => async (req, caller) => {
    if (req.body === undefined || typeof req.body !== "object" || Array.isArray(req.body)) throw new ScimError(400, "invalidSyntax", "A search needs a SearchRequest body.");
    return { status: 200, body: await list(deps, caller, parseScim(scimListQuery, req.body)) };
  };

  // First, so that `GET /Users/.search` is a 405 rather than a User named ".search".
  for (const [path, methods] of Object.entries(ALLOWED_METHODS)) {
    router.all(path, (req, res, next) => {
      if (methods.includes(req.method) || (req.method === "HEAD" && methods.includes("GET"))) return next();
      if (String(req.params.id).toLowerCase() === ".search") return next(); // /Users/.search is its own path, not a User
      res.set("Allow", methods.join(", "));
      next(new ScimError(405, null, `${req.method} is not supported on ${req.path}: use ${methods.join(", ")}.`));
    });
  }

  router.get("/ServiceProviderConfig", ...route(async () => ({ status: 200, body: serviceProviderConfig(base()) })));
  router.get("/ResourceTypes", ...route(async () => ({ status: 200, body: listOf(resourceTypes(base())) })));
  router.get("/ResourceTypes/:id", ...route(async (req) => ({ status: 200, body: byId(resourceTypes(base()), String(req.params.id), "ResourceType") })));
  router.get("/Schemas", ...route(async () => ({ status: 200, body: listOf(schemas(base())) })));
  router.get("/Schemas/:id", ...route(async (req) => ({ status: 200, body: byId(schemas(base()), String(req.params.id), "Schema") })));

  router.get("/Users", ...route(async (req, caller) => ({ status: 200, body: await listUsers(deps, caller, query(req)) })));
  router.post("/Users/.search", ...route(search(listUsers)));
  router.post("/Users", ...route(async (req, caller) => resource(201, await createUser(deps, caller, req.body, projection(req)), true)));
  router.get("/Users/:id", ...route(async (req, caller) => resource(200, await getUser(deps, caller, String(req.params.id), projection(req)))));
  router.put("/Users/:id", ...route(async (req, caller) => resource(200, await replaceUser(deps, caller, String(req.params.id), ifMatch(req), req.body, projection(req)))));
  router.patch("/Users/:id", ...route(async (req, caller) => resource(200, await patchUser(deps, caller, String(req.params.id), ifMatch(req), req.body, projection(req)))));
  router.delete("/Users/:id", ...route(async (req, caller) => (await deleteUser(deps, caller, String(req.params.id), ifMatch(req)), { status: 204 })));

  router.get("/Groups", ...route(async (req, caller) => ({ status: 200, body: await listGroups(deps, caller, query(req)) })));
  router.post("/Groups/.search", ...route(search(listGroups)));
  router.post("/Groups", ...route(async (req, caller) => resource(201, await createGroup(deps, caller, req.body, projection(req)), true)));
  router.get("/Groups/:id", ...route(async (req, caller) => resource(200, await getGroup(deps, caller, String(req.params.id), projection(req)))));
  router.put("/Groups/:id", ...route(async (req, caller) => resource(200, await replaceGroup(deps, caller, String(req.params.id), ifMatch(req), req.body, projection(req)))));
  // A Group's PATCH answers 204 with its ETag unless the caller asks for a projection (groups.ts).
  router.patch("/Groups/:id", ...route(async (req, caller) => {
    const patched = await patchGroup(deps, caller, String(req.params.id), ifMatch(req), req.body, projection(req));
    return "resource" in patched ? resource(200, patched) : { status: 204, headers: { ETag: patched.version } };
  }));
  router.delete("/Groups/:id", ...route(async (req, caller) => (await deleteGroup(deps, caller, String(req.params.id), ifMatch(req)), { status: 204 })));

  // Searches across resource types are not offered: the root /.search answers like any unknown path.
  router.use((req, _res, next) => next(new ScimError(404, null, `No SCIM endpoint ${req.method} ${req.path}.`)));
  router.use(scimErrors(deps));
  return router;
}

/**
 * No key of a body or query that could reach an object's prototype gets past here: scim-patch
 * writes paths (including a no-path value's keys, which Entra sends as paths) into objects.
 */
function refusePrototypeNames(req: Request): void {
  const inQuery = pathOfKey(req.query, pathNamesPrototype);
  if (inQuery !== null) throw new ScimError(400, "invalidPath", `The query parameter '${inQuery}' is not accepted: __proto__, constructor and prototype are never attribute names.`);
  const inBody = pathOfKey(req.body, pathNamesPrototype);
  if (inBody !== null) throw new ScimError(400, "invalidValue", `The body's key '${inBody}' is not accepted: __proto__, constructor and prototype are never attribute names.`);
}

const listOf = (resources: unknown[]) => ({ schemas: ["urn:ietf:params:scim:api:messages:2.0:ListResponse"], totalResults: resources.length, startIndex: 1, itemsPerPage: resources.length, Resources: resources });

function byId<T extends { id: string }>(resources: T[], id: string, kind: string): T {
  const found = resources.find((candidate) => candidate.id.toLowerCase() === id.toLowerCase());
  if (!found) throw new ScimError(404, null, `No ${kind} '${id}'.`);
  return found;
}

/** Every error of the SCIM routes in SCIM's form; a backend that is down is 503, anything unknown a logged 500. */
function scimErrors(deps: Deps): ErrorRequestHandler {
  return (error, req, res, next) => {
    if (res.headersSent) return next(error);
    if (error instanceof ScimError) {
      if (error.status === 401) res.set("WWW-Authenticate", 'Bearer realm="scim"');
      return send(res, error.status, scimErrorBody(error.status, error.message, error.scimType));
    }
    if (error instanceof URIError) return send(res, 400, scimErrorBody(400, "The request URL is malformed (not valid percent-encoding).", "invalidValue"));
    const status = (error as { status?: number; type?: string }).status;
    if (status === 413) return send(res, 413, scimErrorBody(413, "The body is too large.", null));
    if (status === 400 || (error as { type?: string }).type === "entity.parse.failed") return send(res, 400, scimErrorBody(400, "The body is not valid JSON.", "invalidSyntax"));
    if (status === 415) return send(res, 415, scimErrorBody(415, "Send application/scim+json or application/json.", null));
    if (error instanceof ApiError) {
      res.set(error.headers);
      return send(res, error.status, scimErrorBody(error.status, error.detail, null));
    }
    if (isBackendUnavailable(error)) {
      res.set("Retry-After", "1");
      return send(res, 503, scimErrorBody(503, "A backend is unavailable; retry later.", null));
    }
    deps.logger.error("unhandled SCIM error", { requestId: req.requestId, method: req.method, path: req.path, error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
    return send(res, 500, scimErrorBody(500, "Internal error.", null));
  };
}
