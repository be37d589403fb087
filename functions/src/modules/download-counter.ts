import type { DownloadCount } from "./download-store";

/**
 * Counts downloads by group commit: a download joins the batch being gathered, a batch is written
 * as soon as the previous one is durable (one write of each module/day/version's sum), and each
 * download's answer waits for the write that holds it. Every answered download is therefore
 * counted durably, exactly once, and a burst of downloads costs a few writes, not one each. A
 * failed write fails every download it held (none of them is counted, none is answered 2xx).
 */
export interface DownloadCounter {
  count(entry: Omit<DownloadCount, "downloads">): Promise<void>;
}

export function groupCommitCounter(write: (counts: DownloadCount[]) => Promise<void>): DownloadCounter {
  let gathering: { counts: Map<string, DownloadCount>; waiters: { resolve: () => void; reject: (error: unknown) => void }[] } | null = null;
  let writing = false;

  const flush = async () => {
    if (writing || !gathering) return;
    const batch = gathering;
    gathering = null;
    writing = true;
    try {
      await write([...batch.counts.values()]);
      batch.waiters.forEach(({ resolve }) => resolve());
    } catch (error) {
      batch.waiters.forEach(({ reject }) => reject(error));
    } finally {
      writing = false;
      void flush();
    }
  };

  return {
    count(entry) {
      gathering ??= { counts: new Map(), waiters: [] };
      const key = `${entry.moduleId}\u0000${entry.day}\u0000${entry.version}`;
      const known = gathering.counts.get(key);
      if (known) known.downloads += 1;
      else gathering.counts.set(key, { ...entry, downloads: 1 });
      const counted = new Promise<void>((resolve, reject) => gathering!.waiters.push({ resolve, reject }));
      queueMicrotask(() => void flush());
      return counted;
    },
  };
}
