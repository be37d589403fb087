/**
 * Firestore listeners an instance keeps for its whole life (the release catalog, the catalog
 * change feed): each starts on first use and, after it fails, starts again a second later; while
 * it is down its owner serves nothing from memory.
 */
const RESTART_DELAY_MS = 1_000;
const running = new Set<() => void>();

/** Stops every listener of this process (tests end them before their Firestore client). */
export function stopListeners(): void {
  for (const stop of running) stop();
  running.clear();
}

export interface KeptListener {
  /** Starts the listener unless it runs, or failed less than a second ago. */
  ensure(): void;
}

/**
 * `start` opens the listener, calling the given function when it fails, and returns its stop;
 * `onFailure` is told when it failed.
 */
export function keptListener(start: (failed: () => void) => () => void, onFailure: () => void): KeptListener {
  let listening = false;
  let retryAt = 0;
  const open = () => {
    const stop: () => void = start(() => {
      running.delete(stop);
      listening = false;
      retryAt = Date.now() + RESTART_DELAY_MS;
      onFailure();
    });
    running.add(stop);
  };
  return {
    ensure() {
      if (listening || Date.now() < retryAt) return;
      listening = true;
      // Opened on the event loop's next turn: the first listener of a process loads much of the
      // Firestore SDK (about 0.1 s of CPU), which then overlaps the I/O the request that asked
      // for it has started meanwhile (a cold instance's first search reads its snapshot).
      const opening = setImmediate(() => {
        running.delete(cancel);
        open();
      });
      const cancel = () => clearImmediate(opening);
      running.add(cancel);
    },
  };
}
