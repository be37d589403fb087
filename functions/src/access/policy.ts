import { ApiError } from "../core/errors";
import { isModuleUsable } from "./rules";

/**
 * Who may do what with a module, apart from the routes: using (confirm, download) needs the
 * module's entitlement; changing (sign, publish) needs ownership and a version not yet published;
 * a publisher signs only ids in its own namespace.
 */
export function assertMayUseModule(moduleId: string, module: { entitlement?: string | null }, keys: ReadonlySet<string>): void {
  if (!isModuleUsable(module, keys)) {
    throw new ApiError("not_entitled", `Module '${moduleId}' needs the '${module.entitlement}' entitlement.`);
  }
}

export function assertOwnsModule(moduleId: string, module: { developerId: string }, developerId: string): void {
  if (module.developerId !== developerId) {
    throw new ApiError("not_owner", `Module '${moduleId}' belongs to another developer.`);
  }
}

/** Signing or publishing `version`: the module (if it exists yet) is the caller's, the version is not published. */
export function assertMayChangeVersion(
  target: { moduleId: string; version: string },
  module: { developerId: string } | null,
  record: { state: string } | null,
  developerId: string,
): void {
  if (module) assertOwnsModule(target.moduleId, module, developerId);
  if (record?.state === "published") {
    throw new ApiError("version_already_published", `${target.moduleId}@${target.version} is published; published versions are immutable.`);
  }
}

export function assertInNamespace(moduleId: string, publisherId: string): void {
  if (!moduleId.startsWith(`${publisherId}.`)) {
    throw new ApiError("namespace_mismatch", `Module ids of publisher '${publisherId}' start with '${publisherId}.'; got '${moduleId}'.`);
  }
}
