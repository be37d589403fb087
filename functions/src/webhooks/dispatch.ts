import { randomUUID } from "node:crypto";
import { eventOutbox, type RecordedEvent } from "../core/event-outbox";
import { subscribable } from "../core/event-types";
import type { Deps } from "../deps";
import { mailStore, plainTextMail } from "../businesses/mail-store";
import { deliveryStore, endpointOfDelivery, type DeliveryRecord } from "./delivery-store";
import { endpointStore, type EndpointRecord } from "./endpoint-store";
import { isAlreadyExists } from "../core/documents";
import { isBackendUnavailable } from "../core/error-handler";
import { inFlightStore, type SlotState } from "./in-flight-store";
import { failedTooLong, LEASE_MS, verdictOf, type AttemptVerdict } from "./rules";
import { decryptSecret } from "./secrets";
import { sendMessage } from "./sender";

/**
 * From the outbox to the endpoints (contract §21). `fanOut` turns a recorded event into one
 * delivery per subscribed endpoint, in one transaction that also marks the event done, so an event
 * is fanned out once however many instances try. `attemptDelivery` claims a due delivery with a
 * lease, sends it, and records the attempt and what follows. Two deployed functions call them
 * (index.ts), and nothing else does, locally or deployed: the trigger on each new event
 * (`deliverWithin`: the first attempt at once, waiting for a slot and for retries due within its
 * time), and the sweep every minute (sweep.ts), which fans out what a trigger missed and
 * delivers whatever is due, endpoint by endpoint: a change that committed is delivered even when
 * the instance that made it died right after.
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
 * One attempt of a delivery, if it is due and no other attempt holds it: its verdict; "busy" when
 * the endpoint already has its 10 attempts in flight (try again shortly); null when there was
 * nothing to do (not due, held elsewhere, done, or its endpoint disabled). The claim moves the
 * delivery's next attempt to the end of its lease (in flight is not due) and names the attempt; its
 * record is taken only while that claim holds.
 */
export async function attemptDelivery(deps: DispatchDeps, id: string): Promise<AttemptVerdict | "busy" | null> {
  const { db, clock } = deps;
  const deliveries = deliveryStore(db);
  const endpoints = endpointStore(db);
  const inFlight = inFlightStore(db);
  // Read apart from the claim, which holds the delivery and one slot: attempts to one endpoint never queue on it.
  const endpointId = endpointOfDelivery(id);
  const [endpoint, slots] = await Promise.all([endpoints.get(endpointId), inFlight.freeSlots(endpointId, clock())]);
  const free: (SlotState | null)[] = endpoint && !endpoint.disabled ? slots : [null];
  let claimed: { delivery: DeliveryRecord; slot: number; claim: string } | null = null;
  for (const seen of free.slice(0, SLOT_TRIES)) {
    let taken: { delivery: DeliveryRecord; slot: number; claim: string } | "taken" | null;
    try {
      taken = await db.runTransaction(async (tx) => {
        const now = clock();
        const delivery = await deliveries.getIn(tx, id);
        if (!delivery || !claimable(delivery, now)) return null;
        if (!endpoint || endpoint.disabled || !seen) {
          // Kept as failed: `recover` sends it again once the endpoint is enabled.
          deliveries.update(tx, id, { status: "failed", nextAttemptAt: null, leaseUntil: null });
          return null;
        }
        const leaseUntil = new Date(now.getTime() + LEASE_MS);
        const claim = randomUUID();
        if (!(await inFlight.holdIn(tx, endpoint.id, seen, { deliveryId: id, claim }, now, leaseUntil))) return "taken" as const;
        deliveries.update(tx, id, { status: "pending", nextAttemptAt: leaseUntil, leaseUntil, claim });
        return { delivery, slot: seen.slot, claim };
      });
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
      taken = "taken";
    }
    if (taken === null) return null;
    if (taken !== "taken") {
      claimed = taken;
      break;
    }
  }
  if (!claimed || !endpoint) return "busy";
  try {
    const outcome = await send(deps, endpoint, claimed.delivery);
    const verdict = await recordingAttempt(deps, claimed.delivery, claimed, outcome);
    if (verdict) await recordHealth(deps, endpoint, verdict);
    return verdict;
  } finally {
    slotFreed(endpointId);
  }
}

/**
 * Deliveries on this instance waiting for a slot of a busy endpoint (a function instance runs
 * many invocations at once): an attempt that gives its slot back wakes one, which claims at once
 * instead of at its next look. A slot another instance gives back is found at the next look.
 */
const waitingForSlot = new Map<string, Set<() => void>>();

function slotFreed(endpointId: string): void {
  const waiting = waitingForSlot.get(endpointId);
  const [wake] = waiting ?? [];
  if (!wake) return;
  waiting!.delete(wake);
  if (waiting!.size === 0) waitingForSlot.delete(endpointId);
  wake();
}

/** Waits `ms`, or less if an attempt on this instance gives back a slot of the endpoint first. */
function waitForSlot(endpointId: string, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const waiting = waitingForSlot.get(endpointId) ?? new Set<() => void>();
    waitingForSlot.set(endpointId, waiting);
    const wake = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      waiting.delete(wake);
      if (waiting.size === 0 && waitingForSlot.get(endpointId) === waiting) waitingForSlot.delete(endpointId);
      resolve();
    }, Math.max(0, ms));
    waiting.add(wake);
  });
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
 * The attempt on the delivery, and its slot given back, in one transaction, while the attempt's
 * claim still holds. A record that comes after its claim was taken over (its lease ended and
 * another attempt claimed the delivery, or a redelivery cleared it) changes nothing: null.
 */
async function recordAttempt(deps: DispatchDeps, sent: DeliveryRecord, held: { slot: number; claim: string }, outcome: Awaited<ReturnType<typeof sendMessage>>): Promise<AttemptVerdict | null> {
  const { db, clock, config } = deps;
  const deliveries = deliveryStore(db);
  const inFlight = inFlightStore(db);
  return db.runTransaction(async (tx) => {
    const now = clock();
    const [delivery, slot] = await Promise.all([deliveries.getIn(tx, sent.id), inFlight.getIn(tx, sent.endpointId, held.slot)]);
    if (slot?.claim === held.claim) inFlight.releaseIn(tx, sent.endpointId, held.slot);
    if (delivery?.claim !== held.claim) return null;
    const attempts = [...delivery.attempts, { at: now, statusCode: outcome.statusCode, durationMs: outcome.durationMs, ...(outcome.error ? { error: outcome.error.slice(0, 500) } : {}) }];
    const verdict = verdictOf(outcome, attempts.length, config.webhooks.retryScheduleMs, now);
    deliveries.update(tx, sent.id, { status: verdict.status, nextAttemptAt: verdict.status === "pending" ? verdict.nextAttemptAt : null, leaseUntil: null, attempts });
    return verdict;
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
  return plainTextMail(endpoint.contactEmail!, "A webhook endpoint was disabled", text);
}


/**
 * How long a busy endpoint's delivery waits for a slot, at first (doubling to 1 s, ±50 %): a
 * burst to one endpoint waits its turn about as long as the slots take to free, within §21's 5 s.
 */
const BUSY_WAIT_MS = 250;
const BUSY_WAIT_MAX_MS = 1_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/**
 * The trigger's work for one event's deliveries (index.ts `webhookEvents`): each attempted at
 * once; one whose endpoint has its 10 attempts in flight waits for a slot (woken by an attempt of
 * this instance that gives one back, or looking again after a while), and one that failed is
 * tried again when its retry falls due (the schedule's first, 5 s), while an attempt can still
 * start before `startBefore` (a `performance.now()` time) and end, 15 s later, within the
 * function's time. What is left then is the sweep's.
 */
export async function deliverWithin(deps: DispatchDeps, ids: readonly string[], startBefore: number): Promise<void> {
  const canStartIn = (ms: number) => performance.now() + ms < startBefore;
  await Promise.all(
    ids.map(async (id) => {
      let busyWait = BUSY_WAIT_MS;
      for (;;) {
        const verdict = await attemptDelivery(deps, id);
        if (verdict === "busy") {
          const wait = busyWait * (0.5 + Math.random());
          busyWait = Math.min(busyWait * 2, BUSY_WAIT_MAX_MS);
          if (!canStartIn(wait)) return;
          await waitForSlot(endpointOfDelivery(id), wait);
        } else if (verdict?.status === "pending") {
          const wait = verdict.nextAttemptAt.getTime() - deps.clock().getTime();
          if (!canStartIn(wait)) return;
          await sleep(wait);
        } else {
          return;
        }
      }
    }),
  );
}
