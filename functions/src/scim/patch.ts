import { ScimError as PatchError, scimPatch, type ScimPatchOperation } from "scim-patch";
import { pathNamesPrototype } from "../core/validation";
import { invalidValue, ScimError, type ScimResource } from "./resources";

/** SCIM request bodies (§22): parsing through a schema, and PATCH operations applied with scim-patch after their paths are checked. */

/** A body through its schema; what it refuses is 400 invalidValue with the first problem named. */
export function parseScim<T>(schema: { safeParse(value: unknown): { success: true; data: T } | { success: false; error: { issues: Array<{ path: PropertyKey[]; message: string }> } } }, body: unknown): T {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue.path.length > 0 ? `${issue.path.map(String).join(".")}: ` : "";
  throw invalidValue(`${where}${issue.message}`);
}

const PATCH_OPS = new Set(["add", "replace", "remove"]);

/** PATCH operations as RFC 7644 names them: operation names in any case (Microsoft Entra ID sends "Replace"). */
export function patchOperations(body: unknown): ScimPatchOperation[] {
  const operations = (body as { Operations?: unknown })?.Operations;
  if (!Array.isArray(operations) || operations.length === 0) throw new ScimError(400, "invalidSyntax", "A PATCH body needs Operations: a list of add, replace or remove.");
  if (operations.length > 1_000) throw new ScimError(400, "invalidSyntax", "A PATCH body may have at most 1,000 operations.");
  return operations.map((operation: unknown) => {
    const { op, path, value } = (operation ?? {}) as { op?: unknown; path?: unknown; value?: unknown };
    const name = typeof op === "string" ? op.toLowerCase() : "";
    if (!PATCH_OPS.has(name)) throw new ScimError(400, "invalidSyntax", `Unknown PATCH operation '${String(op)}': use add, replace or remove.`);
    if (path !== undefined && (typeof path !== "string" || path.length > 500)) throw new ScimError(400, "invalidPath", "A PATCH path must be a string of at most 500 characters.");
    if (typeof path === "string" && pathNamesPrototype(path)) throw new ScimError(400, "invalidPath", `'${path}' is not an attribute path: __proto__, constructor and prototype are never accepted.`);
    if (name === "remove" && path === undefined) throw new ScimError(400, "noTarget", "A remove operation needs a path.");
    return { op: name, ...(path !== undefined ? { path } : {}), ...(value !== undefined ? { value } : {}) } as ScimPatchOperation;
  });
}

/** The resource with the operations applied (scim-patch); what it refuses is a SCIM 400 with its scimType. */
export function applyPatch(resource: ScimResource, operations: ScimPatchOperation[]): unknown {
  const { meta: _meta, groups: _groups, ...patchable } = resource;
  try {
    return scimPatch(structuredClone(patchable) as never, operations, { mutateDocument: true, treatMissingAsAdd: true });
  } catch (error) {
    // scim-patch works on a copy of our own representation, so whatever it throws comes from the operations.
    throw new ScimError(400, error instanceof PatchError ? (error.scimCode ?? "invalidValue") : "invalidPath", (error as Error).message);
  }
}
