import type { Firestore } from "firebase-admin/firestore";
import { memo } from "../core/memo";
import { activationStore, type Activation } from "../activations/activation-store";
import { loadUserAccess, type UserAccess } from "./service";

/** What reads about a caller need: their access (entitlements, memberships) and activations. */
export interface CallerData {
  access: UserAccess;
  activations: Activation[];
}

/**
 * A caller's data for reads (their profile, the access flags of the listing, downloads), kept per
 * instance for `ttlMs` after one load (four Firestore calls, in parallel where they can be): a
 * busy reader costs no Firestore call per request, and a change made elsewhere (a grant, a new
 * membership, a subscription) shows within `ttlMs`. Writes (confirm) read afresh and make this
 * instance forget what it kept of the caller.
 */
export interface CallerDataCache {
  get(uid: string, now: Date): Promise<CallerData>;
  forget(uid: string): void;
}

export function callerDataCache(db: Firestore, ttlMs: number): CallerDataCache {
  const cache = memo<CallerData>({ ttlMs, maxEntries: 10_000 });
  return {
    get: (uid, now) =>
      cache.get(uid, async () => {
        const [access, activations] = await Promise.all([loadUserAccess(db, uid, now), activationStore(db).list(uid)]);
        return { access, activations };
      }),
    forget: (uid) => cache.forget(uid),
  };
}
