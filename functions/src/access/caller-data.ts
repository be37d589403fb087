import type { Firestore } from "firebase-admin/firestore";
import { activationStore, type Activation } from "../activations/activation-store";
import { loadUserAccess, type UserAccess } from "./service";

/** What reads about a caller need: their access (entitlements, memberships) and activations. */
export interface CallerData {
  access: UserAccess;
  activations: Activation[];
}

/**
 * A caller's data as it is now (contract §13): read at every request, whoever wrote it last (the
 * API, the operator CLI, the billing webhook, the console). Two round trips: the user document,
 * the business query and the activations in parallel, then the subscriptions in one batched read.
 */
export async function loadCallerData(db: Firestore, uid: string, now: Date): Promise<CallerData> {
  const [access, activations] = await Promise.all([loadUserAccess(db, uid, now), activationStore(db).list(uid)]);
  return { access, activations };
}
