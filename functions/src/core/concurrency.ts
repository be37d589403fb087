import { RETRY_AFTER_SECONDS } from "./deadline";
import { unavailable } from "./errors";

/**
 * At most `max` runs at once in this instance; the others wait their turn, in order, for at most
 * `maxWaitMs`, and are then answered 503 `unavailable` with Retry-After. What bounds the memory
 * of package uploads: each run holds a package and its inspection.
 */
export interface ConcurrencyLimit {
  run<T>(work: () => Promise<T>, maxWaitMs: number): Promise<T>;
  readonly active: number;
}

export function concurrencyLimit(max: number, what: string): ConcurrencyLimit {
  let active = 0;
  const queue: { start: () => void; timer: NodeJS.Timeout }[] = [];
  const release = () => {
    active -= 1;
    const next = queue.shift();
    if (next) {
      clearTimeout(next.timer);
      active += 1;
      next.start();
    }
  };
  const turn = (maxWaitMs: number) =>
    new Promise<void>((resolve, reject) => {
      if (active < max) {
        active += 1;
        return resolve();
      }
      const waiter = {
        start: resolve,
        timer: setTimeout(() => {
          queue.splice(queue.indexOf(waiter), 1);
          reject(unavailable(`Too many ${what} at once on this instance; retry later.`, RETRY_AFTER_SECONDS));
        }, maxWaitMs),
      };
      queue.push(waiter);
    });
  return {
    async run(work, maxWaitMs) {
      await turn(maxWaitMs);
      try {
        return await work();
      } finally {
        release();
      }
    },
    get active() {
      return active;
    },
  };
}

/**
 * Runs work one at a time per key, in arrival order, in this instance: concurrent writers of one
 * document queue here instead of contending in Firestore transactions (which, many at once on
 * one document, abort one another until their attempts run out). Another instance's writers are
 * still serialised by the transaction itself.
 */
export function keyedQueue() {
  const tails = new Map<string, Promise<unknown>>();
  return function run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = tails.get(key) ?? Promise.resolve();
    const result = previous.then(work, work);
    const tail = result.catch(() => undefined);
    tails.set(key, tail);
    void tail.then(() => {
      if (tails.get(key) === tail) tails.delete(key);
    });
    return result;
  };
}

export type KeyedQueue = ReturnType<typeof keyedQueue>;

const queuesByClient = new WeakMap<object, Map<string, KeyedQueue>>();

/**
 * The keyed queue `name` of one Firestore client, that is of one instance: where its writers of one
 * kind of document (a business, a module's reviews, an activation) take their turns.
 */
export function instanceQueue(client: object, name: string): KeyedQueue {
  let queues = queuesByClient.get(client);
  if (!queues) queuesByClient.set(client, (queues = new Map()));
  let queue = queues.get(name);
  if (!queue) queues.set(name, (queue = keyedQueue()));
  return queue;
}
