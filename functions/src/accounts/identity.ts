import type { Auth } from "firebase-admin/auth";
import { ApiError } from "../core/errors";
import { withinDeadline } from "../core/deadline";

export interface UserIdentity {
  uid: string;
  email: string | null;
  displayName: string | null;
}

/** A Firebase Auth user by uid, or by email when the reference has an '@' (operator commands). */
export async function findUser(auth: Auth, reference: string): Promise<UserIdentity> {
  try {
    const user = await withinDeadline("Auth", reference.includes("@") ? auth.getUserByEmail(reference) : auth.getUser(reference));
    return { uid: user.uid, email: user.email ?? null, displayName: user.displayName ?? null };
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "auth/user-not-found" || code === "auth/invalid-uid" || code === "auth/invalid-email") {
      throw new ApiError("user_not_found", `No user '${reference}'.`);
    }
    throw error;
  }
}

/**
 * After a change of a membership (§22): an account the business made (a managed user) is
 * disabled while its membership is suspended or removed, and enabled while it is active; any
 * other account is never touched.
 */
export async function applyManagedAccountState(auth: Auth, member: { uid: string; managed: boolean; suspended: boolean }, removed = false): Promise<void> {
  if (!member.managed) return;
  await withinDeadline("Auth", auth.updateUser(member.uid, { disabled: removed || member.suspended }));
}
