import { ApiError } from "../core/errors";

/**
 * Who may see a module (§26): a public module exists for everyone; a business's private module
 * only for the members whose request reaches that business (single sign-on as in §22). To anyone
 * else it does not exist: the same 404 as an unknown id.
 */

/** The businesses a caller's request reaches, read only when a private module asks (null: nobody signed in). */
export type Viewer = (() => Promise<ReadonlySet<string>>) | null;

export const moduleNotFound = (moduleId: string) => new ApiError("module_not_found", `No module '${moduleId}'.`);

export function isVisibleIn(module: { businessId: string | null }, reached: ReadonlySet<string>): boolean {
  return module.businessId === null || reached.has(module.businessId);
}

/** Throws `module_not_found` for a private module the viewer may not see. */
export async function assertVisible(module: { id: string; businessId: string | null }, viewer: Viewer): Promise<void> {
  if (module.businessId === null) return;
  if (!viewer || !(await viewer()).has(module.businessId)) throw moduleNotFound(module.id);
}

/** The businesses of these memberships that the request reaches. */
export const reachedBusinesses = (memberships: readonly { businessId: string; ssoRequired: boolean }[]): ReadonlySet<string> =>
  new Set(memberships.filter((membership) => !membership.ssoRequired).map((membership) => membership.businessId));
