import { eventOutbox } from "../core/event-outbox";
import { attemptDelivery, fanOut, type DispatchDeps } from "./dispatch";
import { deliveryStore, type DueDelivery } from "./delivery-store";
import { endpointStore } from "./endpoint-store";
import { recoveryStore } from "./recovery-store";
import { MAX_IN_FLIGHT_PER_ENDPOINT } from "./rules";

/**
 * The webhook sweep (contract §21), the scheduled `webhookSweep` (index.ts) every minute: the
 * recoveries asked for, the events a trigger missed, and every due delivery, endpoint by endpoint,
 * so that one endpoint's backlog delays no other's (docs/decisions.md).
 */

/** How long the sweep leaves a new event to its trigger. */
const SWEEP_GRACE_MS = 5_000;

/** Due deliveries the sweep reads at a time, and at most in all. */
const SWEEP_PAGE = 300;
const SWEEP_READ_AT_MOST = 3_000;
/** How far the sweep puts back the due deliveries it read and did not attempt (±50 %). */
const LEFT_OVER_DEFER_MS = 60_000;

/**
 * Everything due, on any instance, started before `startBefore` (a `performance.now()` time; the
 * scheduled `webhookSweep` gives it 60 s of its 120): events not yet fanned out and, beside them,
 * the due deliveries, soonest first, a page at a time, endpoint by endpoint, each endpoint worked by as
 * many attempts at once as it has slots. An endpoint found with every slot held (a receiver that
 * stalls holds each for 15 s), or whose attempt fails, is left at once. What the sweep read of a
 * failing endpoint and did not attempt (or had no time for) is put back a minute once no trigger
 * has it: the next sweep reads it behind every other endpoint's due deliveries, so that one
 * endpoint's backlog delays no other's. In flight is not due (the claim moved it to the end of its
 * lease), so a stalled endpoint's attempts are not read again either.
 */
export async function sweepWebhooks(deps: DispatchDeps, startBefore: number): Promise<{ events: number; recovered: number; attempts: number; deferred: number }> {
  const left = () => startBefore - performance.now();
  // An event committed just now is its trigger's to fan out, and a delivery fanned out just now its
  // trigger's to attempt first: the sweep takes what they left, and so does not contend with them
  // for the same documents (nor, at a stalled receiver, hold one of its runs 15 s on a slot the
  // trigger was about to take). Any other due delivery, a redelivery included, is anyone's.
  const settled = new Date(deps.clock().getTime() - SWEEP_GRACE_MS);
  // The events left to the sweep are fanned out beside the due deliveries, not before them: a
  // backlog of one endpoint's events (slow triggers) delays no other endpoint's retries. What they
  // fan out is due once past the grace, for the next run.
  const [events, swept] = await Promise.all([fanOutWaiting(deps, settled, left), attemptDue(deps, settled, left)]);
  return { events, ...swept };
}

/** Events fanned out at once by one sweep. */
const FAN_OUT_AT_ONCE = 10;

/** Fans out the events their triggers left (committed before `settled`), several at once; how many there were. */
async function fanOutWaiting(deps: DispatchDeps, settled: Date, left: () => number): Promise<number> {
  const waiting = await eventOutbox(deps.db).waiting(settled, 200);
  const queue = [...waiting];
  const worker = async () => {
    // One event that cannot be fanned out now (its transaction lost to contention) holds up no other.
    for (let event = queue.shift(); event && left() > 0; event = queue.shift()) {
      const { id } = event;
      await fanOut(deps, id).catch((error: Error) => deps.logger.warn("webhook event could not be fanned out; the next sweep tries again", { eventId: id, error: error.message }));
    }
  };
  await Promise.all(Array.from({ length: Math.min(FAN_OUT_AT_ONCE, queue.length) }, worker));
  return waiting.length;
}

/** The recoveries, then every due delivery past its trigger's grace, endpoint by endpoint. */
async function attemptDue(deps: DispatchDeps, settled: Date, left: () => number): Promise<{ recovered: number; attempts: number; deferred: number }> {
  const recovered = await queueRecoveries(deps, left);
  const deliveries = deliveryStore(deps.db);
  const byEndpoint = new Map<string, DueDelivery[]>();
  let read = 0;
  for (let after: FirebaseFirestore.DocumentSnapshot | undefined, more = true; more && read < SWEEP_READ_AT_MOST && left() > 0; ) {
    const page = await deliveries.due(deps.clock(), SWEEP_PAGE, after);
    read += page.deliveries.length;
    more = page.deliveries.length === SWEEP_PAGE;
    after = page.last;
    for (const delivery of page.deliveries) {
      if (delivery.attempts.length === 0 && delivery.createdAt > settled) continue;
      const queue = byEndpoint.get(delivery.endpointId) ?? [];
      byEndpoint.set(delivery.endpointId, queue);
      queue.push(delivery);
    }
  }
  let attempts = 0;
  await Promise.all(
    [...byEndpoint.values()].map(async (queue) => {
      // No more attempts to one endpoint at once than it has slots, and none after one finds them
      // all held (the rest would only contend for the same slot documents) or one fails (a
      // receiver that is down or stalls would hold this sweep 15 s an attempt): the rest wait for
      // the next sweep.
      let leave = false;
      const worker = async () => {
        while (!leave && left() > 0 && queue.length > 0) {
          const { id } = queue.shift()!;
          try {
            const verdict = await attemptDelivery(deps, id);
            if (verdict === "busy" || (verdict !== null && verdict.status !== "succeeded")) leave = true;
            if (verdict !== null && verdict !== "busy") attempts += 1;
          } catch (error) {
            deps.logger.warn("webhook attempt could not be recorded", { deliveryId: id, error: String(error) });
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(MAX_IN_FLIGHT_PER_ENDPOINT, queue.length) }, worker));
    }),
  );
  const deferred = await deferLeftOver(deps, [...byEndpoint.values()].flat());
  return { recovered, attempts, deferred };
}

/** Failed deliveries a recovery makes due per transaction. */
const RECOVERED_PER_TRANSACTION = 200;

/**
 * The recoveries asked for (`recover`), oldest first: each endpoint's failed deliveries since the
 * time asked made due now, a page per transaction with the recovery's place, while the sweep has
 * time; the sweep's due deliveries then include them. How many were made due.
 */
async function queueRecoveries(deps: DispatchDeps, left: () => number): Promise<number> {
  const deliveries = deliveryStore(deps.db);
  const recoveries = recoveryStore(deps.db);
  let recovered = 0;
  for (const recovery of await recoveries.oldest(10)) {
    for (let after = recovery.after, more = true; more && left() > 0; ) {
      const page = await deliveries.failedSince(recovery.endpointId, recovery.since, after, RECOVERED_PER_TRANSACTION);
      more = page.length === RECOVERED_PER_TRANSACTION;
      const last = page.at(-1);
      if (last) after = { createdAt: last.createdAt, id: last.id };
      await deps.db.runTransaction(async (tx) => {
        const now = deps.clock();
        // Read again: one sent meanwhile (a redelivery) is not failed any more.
        const current = await Promise.all(page.map((delivery) => deliveries.getIn(tx, delivery.id)));
        for (const delivery of current) if (delivery?.status === "failed") deliveries.update(tx, delivery.id, { status: "pending", nextAttemptAt: now, leaseUntil: null });
        recoveries.advanceIn(tx, recovery.id, more ? after : null);
      });
      recovered += page.length;
    }
  }
  return recovered;
}

/** How long a delivery may still be in the hands of the trigger that fanned it out or attempted it last (its function's time). */
const TRIGGER_WINDOW_MS = 120_000;

/**
 * Due deliveries the sweep read and did not attempt, put back a minute each (unless claimed or
 * changed meanwhile), where they would otherwise stand in every sweep's way: those of an endpoint
 * that is failing (a receiver down or stalling; a healthy endpoint's queue is only waiting its
 * turn, often for another sweep that works it), and only once their trigger is done with them
 * (fanned out or last attempted more than its function's time ago), since a trigger waiting for
 * a slot, or for a retry it will send, takes a delivery put back for not due and stops waiting.
 */
async function deferLeftOver(deps: DispatchDeps, read: readonly DueDelivery[]): Promise<number> {
  const deliveries = deliveryStore(deps.db);
  const triggersDoneBy = deps.clock().getTime() - TRIGGER_WINDOW_MS;
  const old = read.filter((delivery) => (delivery.attempts.at(-1)?.at ?? delivery.createdAt).getTime() < triggersDoneBy);
  const endpointIds = [...new Set(old.map((delivery) => delivery.endpointId))];
  const endpoints = await Promise.all(endpointIds.map((id) => endpointStore(deps.db).get(id)));
  const failing = new Set(endpoints.filter((endpoint) => endpoint && endpoint.failingSince !== null).map((endpoint) => endpoint!.id));
  const leftOver = old.filter((delivery) => failing.has(delivery.endpointId));
  let deferred = 0;
  for (let start = 0; start < leftOver.length; start += 50) {
    const results = await Promise.all(
      leftOver.slice(start, start + 50).map((delivery) => deliveries.deferIfUnchanged(delivery.id, delivery.readAt, new Date(deps.clock().getTime() + LEFT_OVER_DEFER_MS * (0.5 + Math.random()))).catch(() => false)),
    );
    deferred += results.filter(Boolean).length;
  }
  return deferred;
}
