import { outsideDeadlines } from "../core/deadline";
import type { DownloadCount } from "./download-store";

/**
 * Counts downloads by group commit, without making the download wait for it: a download's count
 * joins the batch being gathered, and a batch (one sum per module, day and version) is written as
 * soon as the previous write is done. A write that fails is merged back and retried with backoff,
 * so no count is lost to a passing fault; `drain()` writes what is pending, and runs when the
 * instance is told to stop (SIGTERM, which Cloud Functions sends before it shuts an instance
 * down). Only an instance that dies outright loses the counts of its last moments. A burst of
 * downloads costs a few writes, not one each, and never waits on one.
 */
export interface DownloadCounter {
  count(entry: Omit<DownloadCount, "downloads">): void;
  /** Resolves once every count so far is written. */
  drain(): Promise<void>;
}

const MAX_BACKOFF_MS = 30_000;
const counters = new Set<DownloadCounter>();

/** Writes what every counter of this process has pending: for shutdown. */
export function drainDownloadCounters(): Promise<void> {
  return Promise.all([...counters].map((counter) => counter.drain())).then(() => undefined);
}

export function groupCommitCounter(
  write: (counts: DownloadCount[]) => Promise<void>,
  onError: (error: unknown, pending: number) => void = () => {},
): DownloadCounter {
  let gathering = new Map<string, DownloadCount>();
  let writing: Promise<void> | null = null;
  let backoffMs = 0;
  let retry: NodeJS.Timeout | undefined;

  const add = (entry: DownloadCount) => {
    const key = `${entry.moduleId}\u0000${entry.day}\u0000${entry.version}`;
    const known = gathering.get(key);
    if (known) known.downloads += entry.downloads;
    else gathering.set(key, { ...entry });
  };

  const flush = (): Promise<void> => {
    if (writing) return writing;
    if (gathering.size === 0) return Promise.resolve();
    const batch = [...gathering.values()];
    gathering = new Map();
    writing = outsideDeadlines(() => write(batch)).then(
      () => {
        backoffMs = 0;
      },
      (error: unknown) => {
        batch.forEach(add);
        backoffMs = Math.min(MAX_BACKOFF_MS, Math.max(500, backoffMs * 2));
        onError(error, gathering.size);
      },
    );
    return writing.finally(() => {
      writing = null;
      if (gathering.size > 0 && !retry) {
        retry = setTimeout(() => {
          retry = undefined;
          void flush();
        }, backoffMs);
        retry.unref();
      }
    });
  };

  const counter: DownloadCounter = {
    count(entry) {
      add({ ...entry, downloads: 1 });
      if (backoffMs === 0) queueMicrotask(() => void flush());
    },
    async drain() {
      clearTimeout(retry);
      retry = undefined;
      for (let rounds = 0; rounds < 5 && (writing || gathering.size > 0); rounds += 1) {
        await (writing ?? flush());
      }
    },
  };
  counters.add(counter);
  return counter;
}
