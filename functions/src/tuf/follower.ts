import { eventOutbox } from "../core/event-outbox";
import { keptListener } from "../core/listeners";
import type { Config } from "../config";
import { warnOfExpiry } from "./expiry-warnings";
import { applyTargetChanges, resignOnlineRoles } from "./changes";
import { TufNotReadyError, type TufDeps } from "./online-roles";

/** What the sweep needs besides the repository's own: whom to warn of an expiry. */
export type TufSweepDeps = TufDeps & { config: Pick<Config, "operatorEmails"> };

/**
 * How the TUF repository follows the catalog (§23): a publish or revocation records an outbox
 * event with `tufPending` in its own transaction; `applyTargetChanges` takes such events. Three
 * things call it: the instance that follows the outbox (`startTufFollower`: the local stack, the
 * tests, any API instance), the production trigger on each new event, and the scheduled sweep,
 * which also re-signs what is due and warns of root or targets expiring: a change that committed reaches the repository even when the
 * instance that made it died right after.
 */

/** Events a transaction takes at most (each may name a module's every version). */
const EVENTS_PER_TRANSACTION = 20;
/** How long the sweep leaves a new event to the listener and the trigger. */
const SWEEP_GRACE_MS = 5_000;

/** Applies these events, a few to a transaction. */
export async function applyEvents(deps: TufDeps, eventIds: string[]): Promise<number> {
  let changedBins = 0;
  for (let start = 0; start < eventIds.length; start += EVENTS_PER_TRANSACTION) {
    changedBins += (await applyTargetChanges(deps, eventIds.slice(start, start + EVENTS_PER_TRANSACTION))).changedBins;
  }
  return changedBins;
}

/** The scheduled sweep: events the listener and the trigger left, whatever is due for re-signing, and the daily expiry warning. */
export async function sweepTuf(deps: TufSweepDeps) {
  const settled = new Date(deps.clock().getTime() - SWEEP_GRACE_MS);
  const waiting = await eventOutbox(deps.db).tufWaiting(settled, 500);
  const changedBins = await applyEvents(deps, waiting);
  // During a rotation the re-sign waits for the next sweep; the rotation signs everything anyway.
  const resigned = await resignOnlineRoles(deps, { all: false }).catch((error: Error) => {
    if (!(error instanceof TufNotReadyError)) throw error;
    deps.logger.warn(error.message);
    return null;
  });
  const expiryWarnings = await warnOfExpiry(deps);
  return { events: waiting.length, changedBins, resigned, expiryWarnings };
}

export interface TufFollower {
  stop(): Promise<void>;
}

/**
 * On this instance: a listener on the pending events applies them as they are committed (one
 * transaction at a time, so instances contend only with each other), and the sweep runs every
 * `sweepMs`.
 */
export function startTufFollower(deps: TufSweepDeps, options: { sweepMs: number }): TufFollower {
  const queued = new Set<string>();
  let running: Promise<void> | null = null;
  let stopped = false;
  const warn = (error: Error) =>
    error instanceof TufNotReadyError ? deps.logger.warn(error.message) : deps.logger.warn("TUF repository change failed; the sweep tries again", { error: error.message });
  const drain = () => {
    if (running || stopped) return;
    running = (async () => {
      while (queued.size > 0 && !stopped) {
        const ids = [...queued];
        queued.clear();
        await applyEvents(deps, ids).catch(warn);
      }
    })().finally(() => {
      running = null;
      if (queued.size > 0) drain();
    });
  };
  let unsubscribe = () => {};
  const listener = keptListener(
    (failed) => {
      unsubscribe = eventOutbox(deps.db)
        .tufPendingQuery()
        .onSnapshot(
          (snapshot) => {
            for (const change of snapshot.docChanges()) if (change.type === "added") queued.add(change.doc.id);
            drain();
          },
          (error) => {
            deps.logger.warn("TUF follower's listener stopped; it starts again", { error: error.message });
            failed();
          },
        );
      return unsubscribe;
    },
    () => undefined,
  );
  listener.ensure();
  let sweeping: Promise<unknown> | null = null;
  const sweep = setInterval(() => {
    if (stopped || sweeping) return;
    listener.ensure();
    sweeping = sweepTuf(deps)
      .catch(warn)
      .finally(() => {
        sweeping = null;
      });
  }, options.sweepMs);
  sweep.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(sweep);
      unsubscribe();
      // A sweep under way reads the clock as it goes: stopped means nothing signs after this returns.
      await Promise.all([running, sweeping]);
    },
  };
}
