import { randomUUID } from "node:crypto";
import { outsideDeadlines } from "../core/deadline";
import type { DownloadCount } from "./download-store";

/**
 * Counts downloads by group commit, without making the download wait for it: a download's count
 * joins the batch being gathered, and a batch (one sum per module, day and version) is written as
 * soon as the previous write is done. A burst of downloads costs a few writes, not one each, and
 * never waits on one.
 *
 * Each batch is counted exactly once (§28): it has an id of its own, which its write records with
 * `create()` in the same commit (download-store.ts), and a batch whose write failed is retried as
 * it was, under the same id, before anything gathered since: a write that landed though its
 * answer was lost (or that the client library retried) is refused as already there, and counted
 * as done. A batch Firestore refuses outright (one module's document cannot take it) is split by
 * module, so that it holds up no other module's counts. A failing write is retried with backoff,
 * so no count is lost to a passing fault; `drain()` writes what is pending, and runs when the
 * instance is told to stop (SIGTERM, which Cloud Functions sends before it shuts an instance
 * down). Only an instance that dies outright loses the counts of its last moments.
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

/** A batch of counts under the id its write records. */
interface Batch {
  id: string;
  counts: DownloadCount[];
}

export function groupCommitCounter(
  write: (counts: DownloadCount[], batchId: string) => Promise<void>,
  onError: (error: unknown, pending: number) => void = () => {},
  /** Whether an error says the write can never succeed as it is (nothing was written): the batch is split by module. */
  refusedOutright: (error: unknown) => boolean = () => false,
): DownloadCounter {
  let gathering = new Map<string, DownloadCount>();
  /** Batches whose write failed, oldest first: each is retried as it was, under its id. */
  const failed: Batch[] = [];
  let writing: Promise<void> | null = null;
  let backoffMs = 0;
  let retry: NodeJS.Timeout | undefined;

  const add = (entry: DownloadCount) => {
    const key = `${entry.moduleId}\u0000${entry.day}\u0000${entry.version}`;
    const known = gathering.get(key);
    if (known) known.downloads += entry.downloads;
    else gathering.set(key, { ...entry });
  };
  const pendingCount = () => failed.reduce((sum, batch) => sum + batch.counts.length, 0) + gathering.size;

  /** Taking turns: after a failed batch's retry, what was gathered goes next, so that a batch that keeps failing delays nothing else for long. */
  let retriedLast = false;
  /** The next batch to write: a failed one again (the oldest) or what was gathered (under a new id), taking turns. */
  const nextBatch = (): Batch | null => {
    const gathered = () => {
      const batch = { id: randomUUID(), counts: [...gathering.values()] };
      gathering = new Map();
      return batch;
    };
    const retried = failed.length > 0 && (gathering.size === 0 || !retriedLast);
    retriedLast = retried;
    if (retried) return failed.shift()!;
    return gathering.size > 0 ? gathered() : null;
  };

  const flush = (): Promise<void> => {
    if (writing) return writing;
    const batch = nextBatch();
    if (!batch) return Promise.resolve();
    writing = outsideDeadlines(() => write(batch.counts, batch.id)).then(
      () => {
        backoffMs = 0;
      },
      (error: unknown) => {
        const modules = [...new Set(batch.counts.map((count) => count.moduleId))];
        if (refusedOutright(error) && modules.length > 1) {
          // Nothing of it was written: each module's counts go on their own (new ids), so that one module's cannot hold up the rest.
          failed.push(...modules.map((moduleId) => ({ id: randomUUID(), counts: batch.counts.filter((count) => count.moduleId === moduleId) })));
        } else {
          // The outcome may be unknown: the same batch, under the same id, goes again (at the back, so others go first).
          failed.push(batch);
        }
        backoffMs = Math.min(MAX_BACKOFF_MS, Math.max(500, backoffMs * 2));
        onError(error, pendingCount());
      },
    );
    return writing.finally(() => {
      writing = null;
      if (pendingCount() === 0) return;
      if (backoffMs === 0) {
        void flush();
      } else if (!retry) {
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
      for (let rounds = 0; rounds < 5 + failed.length && (writing || pendingCount() > 0); rounds += 1) {
        await (writing ?? flush());
      }
    },
  };
  counters.add(counter);
  return counter;
}
