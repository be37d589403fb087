import type { Logger } from "./logger";

/**
 * Background work an instance follows on the local stack and in tests, as a deployment's trigger
 * and sweep do it (the seat balancer, the SCIM group remover): a listener names the items that
 * wait, a sweep names them again every `sweepMs` (a listener that stopped, an item it missed), and
 * each item runs one at a time; an item named while it runs runs once more after it.
 */

export interface FollowedWork {
  /** Stops following; resolves when what is running now has finished. */
  stop(): Promise<void>;
}

export interface FollowedWorkOptions<T> {
  /** What is done, for the logs: "seat balance", "group removal". */
  what: string;
  /** Starts a listener that calls `onItems` with the items that wait; returns its stop. */
  follow(onItems: (items: T[]) => void, onError: (error: Error) => void): () => void;
  pending(): Promise<T[]>;
  run(item: T): Promise<unknown>;
  keyOf(item: T): string;
  sweepMs: number;
  logger: Logger;
}

export function followWork<T>(options: FollowedWorkOptions<T>): FollowedWork {
  const { what, logger } = options;
  const running = new Map<string, Promise<void>>();
  const again = new Set<string>();
  let stopped = false;
  const run = (item: T): void => {
    const key = options.keyOf(item);
    if (stopped) return;
    if (running.has(key)) {
      again.add(key);
      return;
    }
    const job = options
      .run(item)
      .then(() => undefined)
      .catch((error: Error) => logger.warn(`${what} failed; the sweep tries again`, { key, error: error.message }))
      .finally(() => {
        running.delete(key);
        if (again.delete(key)) run(item);
      });
    running.set(key, job);
  };
  const stopListening = options.follow(
    (items) => items.forEach(run),
    (error) => logger.warn(`${what} listener stopped; the sweep takes over`, { error: error.message }),
  );
  const sweep = setInterval(() => {
    options
      .pending()
      .then((items) => items.forEach(run))
      .catch(() => undefined);
  }, options.sweepMs);
  sweep.unref();
  return {
    async stop() {
      stopped = true;
      stopListening();
      clearInterval(sweep);
      await Promise.allSettled([...running.values()]);
    },
  };
}
