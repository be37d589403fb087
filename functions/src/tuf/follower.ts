import { eventOutbox } from "../core/event-outbox";
import type { Config } from "../config";
import { warnOfExpiry } from "./expiry-warnings";
import { applyTargetChanges, resignOnlineRoles } from "./changes";
import { TufNotReadyError, type TufDeps } from "./online-roles";

/** What the sweep needs besides the repository's own: whom to warn of an expiry. */
export type TufSweepDeps = TufDeps & { config: Pick<Config, "operatorEmails"> };

/**
 * How the TUF repository follows the catalog (§23): a publish or revocation records an outbox
 * event with `tufPending` in its own transaction; `applyTargetChanges` takes such events. Two
 * deployed functions call it (index.ts), locally as deployed: the trigger on each new event
 * (`tufEvents`), and the scheduled sweep (`tufMaintenance`), which also re-signs what is due and
 * warns of root or targets expiring: a change that committed reaches the repository even when the
 * instance that made it died right after.
 */

/** Events a transaction takes at most (each may name a module's every version). */
const EVENTS_PER_TRANSACTION = 20;
/** How long the sweep leaves a new event to its trigger. */
const SWEEP_GRACE_MS = 5_000;

/** Applies these events, a few to a transaction. */
export async function applyEvents(deps: TufDeps, eventIds: string[]): Promise<number> {
  let changedBins = 0;
  for (let start = 0; start < eventIds.length; start += EVENTS_PER_TRANSACTION) {
    changedBins += (await applyTargetChanges(deps, eventIds.slice(start, start + EVENTS_PER_TRANSACTION))).changedBins;
  }
  return changedBins;
}

/** The scheduled sweep: events the trigger left, whatever is due for re-signing, and the daily expiry warning. */
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
