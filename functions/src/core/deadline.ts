import { AsyncLocalStorage } from "node:async_hooks";
import type { NextFunction, Request, Response } from "express";
import { unavailable } from "./errors";

/**
 * Deadlines on every call to Firestore, Storage and Auth. A request runs with a budget: each
 * backend call may take at most the per-call deadline, and never past the request's own end;
 * past either, the call is abandoned with a 503 `unavailable` and `Retry-After`. Outside a
 * request (the operator CLI, the seed) calls have no deadline.
 *
 * An abandoned call is not cancelled: a write may still land after the answer. Writes are
 * therefore ordered so that a late one leaves nothing dangling (a document is written only after
 * the object it points to), and objects no document references are removed by the scheduled
 * clean-up (cleanup/).
 */

export interface DeadlineSettings {
  /** Longest wait for one backend call. */
  callMs: number;
  /** Longest a request may spend in backend calls, all told. */
  requestMs: number;
}

interface Budget {
  callMs: number;
  endsAt: number;
  /**
   * Per backend, whether a call of this request has finished since its current round trip began:
   * a call started after one finished waited for it, so it begins the next round trip.
   */
  rounds: Map<string, { finished: boolean }>;
  /** Calls run to their end, not to a deadline (runToCompletion): only the answer has one. */
  toCompletion?: boolean;
}

const budgets = new AsyncLocalStorage<Budget>();
export const RETRY_AFTER_SECONDS = 5;

/** Express middleware: the rest of the request runs within the deadlines. */
export function requestDeadlines(settings: DeadlineSettings) {
  return (_req: Request, _res: Response, next: NextFunction) =>
    budgets.run({ callMs: settings.callMs, endsAt: Date.now() + settings.requestMs, rounds: new Map() }, next);
}

const callCounts = new Map<string, number>();

/**
 * How many calls each backend ("Firestore", "Storage", "Auth") has been sent by this process, as
 * every call passes through here, and how many sequential round trips requests made to it
 * ("Firestore round trips": calls that started only after another call of the same request had
 * answered begin a new one): what the benchmarks and tests count work per request with.
 */
export function backendCallCounts(): Record<string, number> {
  return Object.fromEntries(callCounts);
}

/**
 * Runs work outside any request's deadlines: for background writes that nobody waits for, which
 * must not be abandoned (an abandoned write may land later, and a retry would then count twice).
 */
export function outsideDeadlines<T>(work: () => T): T {
  return budgets.exit(work);
}

/** The result of a backend call, or a 503 when it does not come within the current budget. */
export function withinDeadline<T>(what: string, work: Promise<T>): Promise<T> {
  return withinCallDeadline(backendCall(what), work);
}

/** What is said and counted of one kind of backend call: worked out once per method (withDeadlines), not per call. */
interface BackendCall {
  backend: string;
  roundTrips: string;
  expired: string;
}

const backendCall = (what: string): BackendCall => {
  const backend = what.split(" ")[0];
  return { backend, roundTrips: `${backend} round trips`, expired: `${what} did not answer in time; retry later.` };
};

function withinCallDeadline<T>(call: BackendCall, work: Promise<T>): Promise<T> {
  count(call.backend);
  const budget = budgets.getStore();
  if (!budget) return work;
  let round = budget.rounds.get(call.backend);
  if (!round || round.finished) {
    round = { finished: false };
    budget.rounds.set(call.backend, round);
    count(call.roundTrips);
  }
  const settled = () => (budget.rounds.get(call.backend)!.finished = true);
  // Marks the round trip's end; it also handles a late failure of a call abandoned at its
  // deadline, which nobody is waiting for then.
  work.then(settled, settled);
  if (budget.toCompletion) return work;
  return settledWithin(work, Math.min(budget.callMs, budget.endsAt - Date.now()), call.expired);
}

const count = (key: string) => callCounts.set(key, (callCounts.get(key) ?? 0) + 1);

/**
 * Runs work that must never be left half-done by a deadline (a request under an Idempotency-Key,
 * core/idempotency.ts): its backend calls get no deadline of their own, so the work always goes on
 * to its end; the answer is its result, or a 503 at the request's end while the work goes on.
 */
export function runToCompletion<T>(work: () => Promise<T>): Promise<T> {
  const budget = budgets.getStore();
  if (!budget) return work();
  const done = budgets.run({ ...budget, toCompletion: true }, work);
  // Whoever gave up waiting is not there to see a later failure.
  done.catch(() => undefined);
  return settledWithin(done, budget.endsAt - Date.now(), "The request did not finish in time; retry it with the same Idempotency-Key.");
}

/**
 * Waiting on something that is not one backend call (work shared by several requests, e.g. the
 * search catalog catching up): bound by the request's end only, and not counted as a call.
 */
export function withinRequestDeadline<T>(what: string, work: Promise<T>): Promise<T> {
  const budget = budgets.getStore();
  if (!budget) return work;
  // Whoever gives up on shared work leaves it running for the others; its failure is theirs to see.
  work.catch(() => undefined);
  return settledWithin(work, budget.endsAt - Date.now(), `${what} was not ready in time; retry later.`);
}

/** `work`'s result, or a 503 saying `message` when it has not settled within `ms`. */
function settledWithin<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(unavailable(message, RETRY_AFTER_SECONDS)), Math.max(0, ms));
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/**
 * The same object, with every method that returns a promise bound by the deadline: how the
 * stores and the object store put all their calls under it in one place.
 */
export function withDeadlines<T extends object>(what: string, methods: T): T {
  const bound = {} as Record<string, unknown>;
  for (const [name, value] of Object.entries(methods)) {
    if (typeof value !== "function") {
      bound[name] = value;
      continue;
    }
    const call = backendCall(`${what} (${name})`);
    bound[name] = (...args: unknown[]) => {
      const result = value.apply(methods, args);
      return result instanceof Promise ? withinCallDeadline(call, result) : result;
    };
  }
  return bound as T;
}
