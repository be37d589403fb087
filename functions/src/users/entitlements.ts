import { z } from "zod";
import { findUser } from "../accounts/identity";
import { userStore } from "../accounts/user-store";
import { auditLog, operatorOf } from "../core/audit-log";
import { entitlementKey } from "../core/documents";
import { ApiError } from "../core/errors";
import { parseInput } from "../core/validation";
import type { OperatorDeps } from "../deps";

/** Operators: direct grants of entitlements to users (`users/{uid}.entitlements`). */

const grantInput = z.object({ user: z.string().min(1), key: entitlementKey });

/** Operators: a direct grant of an entitlement to a user (by uid or email). */
export async function grantEntitlement(deps: OperatorDeps, input: z.input<typeof grantInput>) {
  const { db, auth, clock } = deps;
  const { user: reference, key } = parseInput(grantInput, input);
  const user = await findUser(auth, reference);
  await auditLog(db).commit(operatorOf(deps), { action: "entitlement.grant", target: user.uid, details: { key } }, clock(), (batch) => userStore(db).grantIn(batch, user.uid, key));
  return { uid: user.uid, email: user.email, key, granted: true };
}

/** Operators: takes a direct grant away; a key the user holds only through a subscription is not one. */
export async function revokeEntitlement(deps: OperatorDeps, input: z.input<typeof grantInput>) {
  const { db, auth, clock } = deps;
  const { user: reference, key } = parseInput(grantInput, input);
  const user = await findUser(auth, reference);
  const users = userStore(db);
  if (!(await users.get(user.uid))?.entitlements.includes(key)) {
    throw new ApiError("entitlement_not_found", `User ${user.email ?? user.uid} has no direct '${key}' entitlement.`);
  }
  await auditLog(db).commit(operatorOf(deps), { action: "entitlement.revoke", target: user.uid, details: { key } }, clock(), (batch) => users.revokeIn(batch, user.uid, key));
  return { uid: user.uid, email: user.email, key, granted: false };
}
