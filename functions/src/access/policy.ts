import { ApiError } from "../core/errors";
import type { ModuleDocument } from "../core/documents";
import { isModuleUsable } from "./rules";

/**
 * Who may do what with a module, apart from the routes: using (confirm, download) needs the
 * module's entitlement; changing (sign, publish) needs ownership.
 */
export function assertMayUseModule(moduleId: string, module: Pick<ModuleDocument, "entitlement">, keys: ReadonlySet<string>): void {
  if (!isModuleUsable(module, keys)) {
    throw new ApiError("not_entitled", `Module '${moduleId}' needs the '${module.entitlement}' entitlement.`);
  }
}

export function assertOwnsModule(moduleId: string, module: Pick<ModuleDocument, "developerId">, developerId: string): void {
  if (module.developerId !== developerId) {
    throw new ApiError("not_owner", `Module '${moduleId}' belongs to another developer.`);
  }
}

export function assertInNamespace(moduleId: string, publisherId: string): void {
  if (!moduleId.startsWith(`${publisherId}.`)) {
    throw new ApiError("namespace_mismatch", `Module ids of publisher '${publisherId}' start with '${publisherId}.'; got '${moduleId}'.`);
  }
}
