import { DAY_MS } from "../core/time";

/** What happens after an attempt (contract §21): pure, so the schedule is tested apart. */

/** Every attempt failing for this long disables the endpoint, and its owner is emailed. */
export const FAILING_LIMIT_MS = 5 * DAY_MS;
/** How long an instance holds a delivery it is sending: longer than an attempt may take. */
export const LEASE_MS = 60_000;
/** A receiver's Retry-After is honoured up to this; a longer one counts as this (§21). */
export const MAX_RETRY_AFTER_MS = 24 * 3_600_000;
/** At most this many attempts in flight to one endpoint, across every instance (in-flight-store.ts holds one slot per attempt). */
export const MAX_IN_FLIGHT_PER_ENDPOINT = 10;

export interface InFlightSlot {
  deliveryId: string;
  leaseUntil: Date;
  /** The claim of the attempt holding it (null: a slot taken before claims were recorded). */
  claim: string | null;
}

/** Whether an attempt may take the slot: no attempt holds it, or the one that did has outlived its lease (its instance died). */
export const slotFree = (slot: InFlightSlot | null, now: Date) => slot === null || slot.leaseUntil <= now;

export type AttemptVerdict =
  | { status: "succeeded" }
  | { status: "pending"; nextAttemptAt: Date }
  | { status: "failed"; disable?: string };

/** Whether an attempt succeeded: the receiver answered a 2xx. */
export const answeredSuccess = (outcome: { statusCode: number | null }) => outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300;

/**
 * After the `attempt`-th attempt (1 for the first) ended with `statusCode` (null: no answer):
 * success is a 2xx; a 410 fails the message and disables the endpoint; otherwise the next try
 * follows the schedule, ±10 % jitter, or a longer Retry-After; after the schedule, failed.
 */
export function verdictOf(
  outcome: { statusCode: number | null; retryAfterMs?: number },
  attempt: number,
  scheduleMs: readonly number[],
  now: Date,
  random: () => number = Math.random,
): AttemptVerdict {
  const { statusCode } = outcome;
  if (answeredSuccess(outcome)) return { status: "succeeded" };
  if (statusCode === 410) return { status: "failed", disable: "The endpoint answered 410 Gone." };
  const wait = scheduleMs[attempt - 1];
  if (wait === undefined) return { status: "failed" };
  const jittered = Math.round(wait * (0.9 + 0.2 * random()));
  const asked = Math.min(outcome.retryAfterMs ?? 0, MAX_RETRY_AFTER_MS);
  return { status: "pending", nextAttemptAt: new Date(now.getTime() + Math.max(jittered, asked)) };
}

/** Whether an endpoint failing since `failingSince` has failed long enough to be disabled. */
export const failedTooLong = (failingSince: Date | null, now: Date) => failingSince !== null && now.getTime() - failingSince.getTime() >= FAILING_LIMIT_MS;
