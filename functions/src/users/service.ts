import type { Firestore } from "firebase-admin/firestore";
import { loadUserAccess } from "../access/service";
import type { Caller } from "../core/auth";
import { activationDocument, COLLECTIONS, readDocument, toIso } from "../core/documents";
import type { UserProfile } from "./schemas";

/** The caller's profile; a user without a `users/{uid}` document gets an empty one. */
export async function getProfile(db: Firestore, caller: Caller, now: Date): Promise<UserProfile> {
  const [access, activations] = await Promise.all([
    loadUserAccess(db, caller.uid, now),
    db.collection(COLLECTIONS.users).doc(caller.uid).collection(COLLECTIONS.activations).orderBy("activatedAt").get(),
  ]);
  return {
    uid: caller.uid,
    email: caller.email,
    displayName: access.user?.displayName ?? caller.name,
    entitlements: access.grants,
    businesses: access.memberships.map(({ businessId, name, role }) => ({ id: businessId, name, role })),
    activations: activations.docs.map((snapshot) => {
      const activation = readDocument(activationDocument, snapshot)!;
      return { moduleId: activation.moduleId, version: activation.version, activatedAt: toIso(activation.activatedAt) };
    }),
  };
}
