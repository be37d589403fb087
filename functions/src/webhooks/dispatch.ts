import { eventOutbox, type RecordedEvent } from "../core/event-outbox";
import { subscribable } from "../core/event-types";
import type { Deps } from "../deps";
import { escapeHtml, mailStore } from "../businesses/mail-store";
import { deliveryStore, endpointOfDelivery, type DeliveryRecord } from "./delivery-store";
import { endpointStore, type EndpointRecord } from "./endpoint-store";
import { isAlreadyExists } from "../core/documents";
import { isBackendUnavailable } from "../core/error-handler";
import { inFlightStore, type SlotState } from "./in-flight-store";
import { answeredSuccess, failedTooLong, LEASE_MS, MAX_IN_FLIGHT_PER_ENDPOINT, verdictOf, type AttemptVerdict } from "./rules";
import { decryptSecret } from "./secrets";
import { sendMessage } from "./sender";

/**
 * From the outbox to the endpoints (contract §21). `fanOut` turns a recorded event into one
 * delivery per subscribed endpoint, in one transaction that also marks the event done, so an event
 * is fanned out once however many instances try. `attemptDelivery` claims a due delivery with a
 * lease, sends it, and records the attempt and what follows. Three things call them: the instance
 * that follows the outbox (`startWebhookDispatcher`: the local stack and tests, and any API
 * instance), the production trigger on each new event, and the sweep every minute, which delivers
 * whatever is due and not in flight: a change that committed is delivered even when the instance
 * that made it died right after.
 */

export type DispatchDeps = Pick<Deps, "db" | "clock" | "logger"> & { config: Pick<Deps["config"], "webhooks"> };

const ownerKindOf = (ownerKey: string) => ownerKey.split(":")[0] as "business" | "publisher" | "operator";

/** The message body: `{ type, timestamp, data }`, as every attempt sends it. */
export const messageBody = (event: RecordedEvent) => JSON.stringify({ type: event.type, timestamp: event.at.toISOString(), data: event.data });

/**
 * Fans an event out to the endpoints that take it; the ids of the deliveries made (none when it
 * was done already). The endpoints are read before the transaction, which holds only the event and
 * its deliveries: an endpoint changed meanwhile gets the event as it was subscribed a moment ago.
 */
export async function fanOut({ db, clock }: DispatchDeps, eventId: string): Promise<string[]> {
  const outbox = eventOutbox(db);
  const endpoints = endpointStore(db);
  const deliveries = deliveryStore(db);
  const recorded = outbox.read(await outbox.ref(eventId).get());
  if (!recorded || recorded.fannedOut) return [];
  const candidates = recorded.endpointId ? [await endpoints.get(recorded.endpointId)].filter((found): found is EndpointRecord => found !== null) : await endpoints.ofOwners(recorded.ownerKeys);
  return db.runTransaction(async (tx) => {
    const event = outbox.read(await tx.get(outbox.ref(eventId)));
    if (!event || event.fannedOut) return [];
    const chosen = candidates.filter(
      (endpoint) => !endpoint.disabled && (event.endpointId !== null || ((endpoint.events.includes("*") || endpoint.events.includes(event.type)) && subscribable(event.type, ownerKindOf(endpoint.owner)))),
    );
    const payload = messageBody(event);
    const now = clock();
    for (const endpoint of chosen) {
      deliveries.create(tx, { endpointId: endpoint.id, messageId: event.id, type: event.type, payload, createdAt: event.at, status: "pending", attempts: [], nextAttemptAt: now, leaseUntil: null });
    }
    outbox.markFannedOut(tx, event.id);
    return chosen.map((endpoint) => `${event.id}.${endpoint.id}`);
  });
}

/** How many free slots one attempt tries before it counts the endpoint as busy. */
const SLOT_TRIES = 3;

/**
 * One attempt of a delivery, if it is due and no other instance holds it: its verdict; "busy" when
 * the endpoint already has its 10 attempts in flight (try again shortly); null when there was
 * nothing to do (not due, held elsewhere, done, or its endpoint disabled). With `queue`, a success
 * hands the slot on to the next delivery waiting for the endpoint, and so on while they succeed.
 */
export async function attemptDelivery(deps: DispatchDeps, id: string, queue?: WaitingDeliveries): Promise<AttemptVerdict | "busy" | null> {
  const { db, clock } = deps;
  const deliveries = deliveryStore(db);
  const endpoints = endpointStore(db);
  const inFlight = inFlightStore(db);
  // Read apart from the claim, which holds the delivery and one slot: attempts to one endpoint never queue on it.
  const endpointId = endpointOfDelivery(id);
  const [endpoint, slots] = await Promise.all([endpoints.get(endpointId), inFlight.freeSlots(endpointId, clock())]);
  const free: (SlotState | null)[] = endpoint && !endpoint.disabled ? slots : [null];
  let claimed: { delivery: DeliveryRecord; slot: number } | null = null;
  for (const seen of free.slice(0, SLOT_TRIES)) {
    let claim: { delivery: DeliveryRecord; slot: number } | "taken" | null;
    try {
      claim = await db.runTransaction(async (tx) => {
        const now = clock();
        const delivery = await deliveries.getIn(tx, id);
        if (!delivery || !claimable(delivery, now)) return null;
        if (!endpoint || endpoint.disabled || !seen) {
          // Kept as failed: `recover` sends it again once the endpoint is enabled.
          deliveries.update(tx, id, { status: "failed", nextAttemptAt: null, leaseUntil: null });
          return null;
        }
        const leaseUntil = new Date(now.getTime() + LEASE_MS);
        if (!(await inFlight.holdIn(tx, endpoint.id, seen, id, now, leaseUntil))) return "taken" as const;
        deliveries.update(tx, id, { status: "pending", nextAttemptAt: delivery.nextAttemptAt, leaseUntil });
        return { delivery, slot: seen.slot };
      });
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
      claim = "taken";
    }
    if (claim === null) return null;
    if (claim !== "taken") {
      claimed = claim;
      break;
    }
  }
  if (!claimed || !endpoint) return "busy";
  let { delivery } = claimed;
  const { slot } = claimed;
  let first: AttemptVerdict | null = null;
  for (;;) {
    const outcome = await send(deps, endpoint, delivery);
    // After a success the slot goes straight to the next delivery waiting for this endpoint here, claimed in the same transaction.
    const nextId = answeredSuccess(outcome) ? (queue?.take(endpointId) ?? null) : null;
    const recorded = await recordingAttempt(deps, delivery, slot, outcome, nextId).catch((error: unknown) => {
      if (nextId) queue?.giveBack(endpointId, nextId);
      throw error;
    });
    await recordHealth(deps, endpoint, recorded.verdict);
    if (first === null) first = recorded.verdict;
    else queue?.settled(delivery.id, recorded.verdict);
    if (!recorded.next) return first;
    delivery = recorded.next;
  }
}

/** The deliveries a dispatcher keeps waiting for a busy endpoint, which an attempt that ends well hands its slot to. */
export interface WaitingDeliveries {
  take(endpointId: string): string | undefined;
  /** A delivery taken that could not be handed the slot after all: it waits again. */
  giveBack(endpointId: string, id: string): void;
  /** The verdict of a delivery that was handed a slot. */
  settled(id: string, verdict: AttemptVerdict): void;
}

async function send(deps: DispatchDeps, endpoint: EndpointRecord, delivery: DeliveryRecord): Promise<Awaited<ReturnType<typeof sendMessage>>> {
  const { clock, config } = deps;
  try {
    const live = endpoint.secrets.filter((secret) => !secret.retiresAt || secret.retiresAt > clock());
    const secrets = live.map((secret) => decryptSecret(secret.sealed, config.webhooks.secretsKey, endpoint.id));
    return await sendMessage(endpoint.url, { id: delivery.messageId, payload: delivery.payload, secrets }, config.webhooks, clock);
  } catch (error) {
    return { statusCode: null, durationMs: 0, error: `The message could not be sent: ${(error as Error).message}` };
  }
}

/** How often recording an attempt is tried when Firestore gives up on it under contention. */
const RECORD_TRIES = 5;

/**
 * The attempt recorded, tried again (0.4, 0.8, 1.6, 3.2 s apart, ±50 %) while Firestore gives up
 * on the transaction: the message went out, and an attempt left unrecorded holds the delivery's
 * lease and its slot for a minute, then is sent again.
 */
async function recordingAttempt(...args: Parameters<typeof recordAttempt>): ReturnType<typeof recordAttempt> {
  for (let tries = 1; ; tries += 1) {
    try {
      return await recordAttempt(...args);
    } catch (error) {
      if (tries >= RECORD_TRIES || !isBackendUnavailable(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200 * 2 ** tries * (0.5 + Math.random())));
    }
  }
}

/**
 * The attempt on the delivery, and what follows it. In the same transaction the attempt's slot is
 * given back or, when `nextId` is a delivery due now that nobody holds, handed to it (claimed with
 * a lease as a claim would).
 */
async function recordAttempt(deps: DispatchDeps, sent: DeliveryRecord, slot: number, outcome: Awaited<ReturnType<typeof sendMessage>>, nextId: string | null): Promise<{ verdict: AttemptVerdict; next: DeliveryRecord | null }> {
  const { db, clock, config } = deps;
  const deliveries = deliveryStore(db);
  const inFlight = inFlightStore(db);
  return db.runTransaction(async (tx) => {
    const now = clock();
    const [delivery, held, waiting] = await Promise.all([deliveries.getIn(tx, sent.id), inFlight.getIn(tx, sent.endpointId, slot), nextId ? deliveries.getIn(tx, nextId) : null]);
    const attempts = [...(delivery ?? sent).attempts, { at: now, statusCode: outcome.statusCode, durationMs: outcome.durationMs, ...(outcome.error ? { error: outcome.error.slice(0, 500) } : {}) }];
    const verdict = verdictOf(outcome, attempts.length, config.webhooks.retryScheduleMs, now);
    if (delivery) deliveries.update(tx, sent.id, { status: verdict.status, nextAttemptAt: verdict.status === "pending" ? verdict.nextAttemptAt : null, leaseUntil: null, attempts });
    if (held?.deliveryId !== sent.id) return { verdict, next: null };
    const next = waiting && claimable(waiting, now) ? waiting : null;
    if (!next) {
      inFlight.releaseIn(tx, sent.endpointId, slot);
      return { verdict, next: null };
    }
    const leaseUntil = new Date(now.getTime() + LEASE_MS);
    inFlight.handOverIn(tx, sent.endpointId, slot, next.id, leaseUntil);
    deliveries.update(tx, next.id, { status: "pending", nextAttemptAt: next.nextAttemptAt, leaseUntil });
    return { verdict, next };
  });
}

/** Whether an attempt may claim the delivery now: pending, due, and held by no other attempt. */
const claimable = (delivery: DeliveryRecord, now: Date) => delivery.status === "pending" && !(delivery.nextAttemptAt && delivery.nextAttemptAt > now) && !(delivery.leaseUntil && delivery.leaseUntil > now);

/**
 * The endpoint's health after an attempt: failing since when, and disabled (with its owner
 * emailed) after a 410 or 5 days of failures. Written only when it changes, so a healthy
 * endpoint's deliveries never write to it.
 */
async function recordHealth(deps: DispatchDeps, seen: EndpointRecord, verdict: AttemptVerdict): Promise<void> {
  const failed = verdict.status !== "succeeded";
  if (!failed && seen.failingSince === null) return;
  const { db, clock, logger } = deps;
  const endpoints = endpointStore(db);
  const endpointId = seen.id;
  await db.runTransaction(async (tx) => {
    const now = clock();
    const endpoint = await endpoints.getIn(tx, endpointId);
    if (endpoint) {
      const failingSince = verdict.status === "succeeded" ? null : (endpoint.failingSince ?? now);
      const disabledReason =
        verdict.status === "failed" && verdict.disable ? verdict.disable : verdict.status !== "succeeded" && failedTooLong(failingSince, now) ? "Every attempt failed for 5 days." : undefined;
      if (disabledReason && !endpoint.disabled) {
        endpoints.setHealth(tx, endpointId, { failingSince, disabledReason });
        if (endpoint.contactEmail) mailStore(db).queueIn(tx, disabledEmail(endpoint, disabledReason), now);
        logger.warn("webhook endpoint disabled", { endpointId, reason: disabledReason });
      } else if ((failingSince?.getTime() ?? null) !== (endpoint.failingSince?.getTime() ?? null)) {
        endpoints.setHealth(tx, endpointId, { failingSince });
      }
    }
  });
}

function disabledEmail(endpoint: EndpointRecord, reason: string) {
  const text = `Your webhook endpoint ${endpoint.url} was disabled: ${reason}\n\nIts messages are kept for 30 days. Fix the receiver, enable the endpoint again, and recover what failed since it began failing.`;
  return { to: endpoint.contactEmail!, subject: "A webhook endpoint was disabled", text, html: `<p>${escapeHtml(text).replaceAll("\n\n", "</p><p>")}</p>` };
}


/** How long the sweep leaves a new event or a due attempt to the instance that made it. */
const SWEEP_GRACE_MS = 5_000;

/**
 * After this long (wall time) a sweep starts no more attempts: one under way takes at most 15 s
 * and its record, so the sweep ends well within its function's 120 s, and the next sweep goes on.
 */
const SWEEP_ATTEMPTS_FOR_MS = 60_000;

/**
 * Everything due, on any instance: events not yet fanned out, then deliveries whose attempt is due
 * and not in flight. The scheduled `webhookSweep` runs it every minute.
 */
export async function sweepWebhooks(deps: DispatchDeps): Promise<{ events: number; attempts: number }> {
  // What became due just now is the listener's and the timers' to send: the sweep takes what they
  // left, and so does not contend with them for the same documents.
  const settled = new Date(deps.clock().getTime() - SWEEP_GRACE_MS);
  const waiting = await eventOutbox(deps.db).waiting(settled, 200);
  // One event that cannot be fanned out now (its transaction lost to contention) holds up no other, nor the attempts.
  for (const event of waiting) await fanOut(deps, event.id).catch((error: Error) => deps.logger.warn("webhook event could not be fanned out; the next sweep tries again", { eventId: event.id, error: error.message }));
  const due = await deliveryStore(deps.db).due(settled, 200);
  const stopAttemptsAt = performance.now() + SWEEP_ATTEMPTS_FOR_MS;
  const byEndpoint = new Map<string, string[]>();
  for (const delivery of due) byEndpoint.set(delivery.endpointId, [...(byEndpoint.get(delivery.endpointId) ?? []), delivery.id]);
  let attempts = 0;
  await Promise.all(
    [...byEndpoint.values()].map(async (ids) => {
      // At most as many attempts to one endpoint at once as it has slots, and none after one finds them all held:
      // the rest would only contend for the same slot documents.
      let busy = false;
      const worker = async () => {
        for (let id = ids.shift(); id !== undefined && !busy && performance.now() < stopAttemptsAt; id = ids.shift()) {
          try {
            const verdict = await attemptDelivery(deps, id);
            if (verdict === "busy") busy = true;
            else if (verdict !== null) attempts += 1;
          } catch (error) {
            deps.logger.warn("webhook attempt could not be recorded", { deliveryId: id, error: String(error) });
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(MAX_IN_FLIGHT_PER_ENDPOINT, ids.length) }, worker));
    }),
  );
  return { events: waiting.length, attempts };
}

export interface WebhookDispatcher {
  stop(): Promise<void>;
}

/** How soon deliveries waiting for a busy endpoint look again for a slot another instance gave back (±50 %). */
const BUSY_RETRY_MS = 1_000;

/** Retries due sooner than this after a failure are timed on the instance; later ones are the sweep's. */
const TIMED_RETRY_LIMIT_MS = 15 * 60_000;

/**
 * Delivery on this instance: a listener on the outbox fans out each new event and attempts its
 * deliveries at once (well within the contract's 5 s), a failed attempt's retry is timed here when
 * it is due within 15 minutes, and the sweep runs every `sweepMs` for anything else (another
 * instance's leftovers, retries of a restarted instance). Deliveries to an endpoint that has its
 * 10 attempts in flight wait here, without asking Firestore again, until one of this instance's
 * attempts to it ends (or, for another instance's, a second later). The local stack and the tests
 * run it; a deployment runs the same functions from its trigger and its scheduled sweep (index.ts).
 */
export function startWebhookDispatcher(deps: DispatchDeps, options: { sweepMs: number }): WebhookDispatcher {
  const running = new Set<Promise<unknown>>();
  const timers = new Set<NodeJS.Timeout>();
  /** Per endpoint: this instance's attempts in progress, and the deliveries waiting for a slot. */
  const inProgress = new Map<string, number>();
  const waiting = new Map<string, Set<string>>();
  let stopped = false;
  const track = (work: Promise<unknown>) => {
    running.add(work);
    void work.catch((error: Error) => deps.logger.warn("webhook dispatch failed; the sweep tries again", { error: error.message })).finally(() => running.delete(work));
  };
  const later = (wait: number, then: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (!stopped) then();
    }, Math.max(0, wait));
    timer.unref();
    timers.add(timer);
  };
  const wait = (endpointId: string, id: string) => {
    const queue = waiting.get(endpointId) ?? new Set<string>();
    waiting.set(endpointId, queue);
    queue.add(id);
  };
  /** Starts what waits for the endpoint, as far as this instance's own attempts leave room. */
  const next = (endpointId: string) => {
    const queue = waiting.get(endpointId);
    while (queue && queue.size > 0 && (inProgress.get(endpointId) ?? 0) < MAX_IN_FLIGHT_PER_ENDPOINT) {
      const [id] = queue;
      queue.delete(id);
      attempt(id);
    }
    if (queue?.size === 0) waiting.delete(endpointId);
  };
  /** A failed attempt's retry, timed here when it is due soon. */
  const settled = (id: string, verdict: AttemptVerdict) => {
    if (stopped || verdict.status !== "pending") return;
    const retryIn = verdict.nextAttemptAt.getTime() - deps.clock().getTime();
    if (retryIn <= TIMED_RETRY_LIMIT_MS) later(retryIn, () => attempt(id));
  };
  const queue: WaitingDeliveries = {
    take(endpointId) {
      const waitingFor = waiting.get(endpointId);
      const [id] = waitingFor ?? [];
      if (id !== undefined) waitingFor!.delete(id);
      return stopped ? undefined : id;
    },
    giveBack: wait,
    settled,
  };
  const attempt = (id: string): void => {
    if (stopped) return;
    const endpointId = endpointOfDelivery(id);
    if ((inProgress.get(endpointId) ?? 0) >= MAX_IN_FLIGHT_PER_ENDPOINT) return wait(endpointId, id);
    inProgress.set(endpointId, (inProgress.get(endpointId) ?? 0) + 1);
    track(
      attemptDelivery(deps, id, queue)
        .then((verdict) => {
          if (stopped || verdict === null) return;
          if (verdict === "busy") {
            // Every slot is held, some by other instances: look again in a while unless one of ours ends first.
            wait(endpointId, id);
            later(BUSY_RETRY_MS * (0.5 + Math.random()), () => next(endpointId));
            return;
          }
          settled(id, verdict);
        })
        .finally(() => {
          const count = (inProgress.get(endpointId) ?? 1) - 1;
          if (count > 0) inProgress.set(endpointId, count);
          else inProgress.delete(endpointId);
          next(endpointId);
        }),
    );
  };
  const process = (eventId: string) => track(fanOut(deps, eventId).then((ids) => ids.forEach(attempt)));
  const unsubscribe = eventOutbox(deps.db)
    .collection.where("fannedOut", "==", false)
    .onSnapshot(
      (snapshot) => {
        for (const change of snapshot.docChanges()) if (change.type === "added") process(change.doc.id);
      },
      (error) => deps.logger.warn("webhook outbox listener stopped; the sweep delivers", { error: error.message }),
    );
  // A sweep starts only once the one before it ended: sweeps piling up while Firestore is slow
  // would contend with each other (and the other instances' sweeps) for the same events for ever.
  let sweeping = false;
  const sweep = setInterval(() => {
    if (stopped || sweeping) return;
    sweeping = true;
    track(sweepWebhooks(deps).finally(() => (sweeping = false)));
  }, options.sweepMs);
  sweep.unref();
  return {
    async stop() {
      stopped = true;
      unsubscribe();
      clearInterval(sweep);
      for (const timer of timers) clearTimeout(timer);
      await Promise.allSettled([...running]);
    },
  };
}
