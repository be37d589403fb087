import { z } from "zod";
import { findUser } from "../accounts/identity";
import { userStore } from "../accounts/user-store";
import { entitlementKey } from "../core/documents";
import { ApiError } from "../core/errors";
import { parseInput } from "../core/validation";
import type { OperatorDeps } from "../deps";

/** Operators: direct grants of entitlements to users (`users/{uid}.entitlements`). */

const grantInput = z.object({ user: z.string().min(1), key: entitlementKey });

/** Operators: a direct grant of an entitlement to a user (by uid or email). */
export async function grantEntitlement({ db, auth }: OperatorDeps, input: z.input<typeof grantInput>) {
  const { user: reference, key } = parseInput(grantInput, input);
  const user = await findUser(auth, reference);
  await userStore(db).grant(user.uid, key);
  return { uid: user.uid, email: user.email, key, granted: true };
}

/** Operators: takes a direct grant away; a key the user holds only through a subscription is not one. */
export async function revokeEntitlement({ db, auth }: OperatorDeps, input: z.input<typeof grantInput>) {
  const { user: reference, key } = parseInput(grantInput, input);
  const user = await findUser(auth, reference);
  const users = userStore(db);
  if (!(await users.get(user.uid))?.entitlements.includes(key)) {
    throw new ApiError("entitlement_not_found", `User ${user.email ?? user.uid} has no direct '${key}' entitlement.`);
  }
  await users.revoke(user.uid, key);
  return { uid: user.uid, email: user.email, key, granted: false };
}
