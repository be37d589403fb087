import { FieldValue, type Firestore, type Transaction, type WriteBatch } from "firebase-admin/firestore";
import { z } from "zod";
import { withDeadlines } from "../core/deadline";
import { documentAt, oncePerDatabase, readDocument } from "../core/documents";
import type { DayCell } from "./rules";

/**
 * `metricMonths/{moduleId}_{YYYY-MM}`: a module's analytics of one UTC month (contract §28), one
 * document, so that a 25-month daily query reads 25 documents; `publisherMetricMonths/{publisherId}_{YYYY-MM}`
 * the same summed over a publisher's modules, so that `/developers/metrics` reads one document a
 * month whatever the number of modules, and `marketplaceMetricMonths/{YYYY-MM}` over every module, for
 * operators. Only the count folder writes them (`applyIn`, from the
 * records changes leave in `pendingCounts` and on device activity), a few times a minute at most,
 * as blind increments that take no lock. A day's figure of a metric is `days.DD.<metric>.t` (a
 * number, or `{ currency: minor units }` for money), split in `.v.<version>` and `.p.<platform>`.
 * The names and rules of the metrics are `rules.ts`'s; the API that reads them is analytics/.
 */

export interface MetricCount {
  moduleId: string;
  /** UTC day, YYYY-MM-DD. */
  day: string;
  metric: string;
  amount: number;
  /** Money metrics: the currency of `amount`. */
  currency?: string;
  version?: string;
  platform?: string;
  /** Moves `amount` between split values only: the total stays (a device that changed version). */
  onlySplits?: boolean;
}

const cell = z.object({ t: z.union([z.number(), z.record(z.string(), z.number())]), v: z.record(z.string(), z.number()).optional(), p: z.record(z.string(), z.number()).optional() });
const monthDocument = z.object({ month: z.string(), days: z.record(z.string(), z.record(z.string(), cell)).default({}) });

/** A month's cells: `cells.get("DD")?.get(metric)`. */
export interface MetricMonth {
  month: string;
  cells: Map<string, Map<string, DayCell>>;
}

type Nested = { [key: string]: Nested | number };
const increment = (target: Nested, path: string[], amount: number) => {
  let node = target;
  for (const key of path.slice(0, -1)) node = (node[key] ??= {}) as Nested;
  const last = path.at(-1)!;
  node[last] = ((node[last] as number | undefined) ?? 0) + amount;
};
const toIncrements = (node: Nested): Record<string, unknown> =>
  Object.fromEntries(Object.entries(node).map(([key, value]) => [key, typeof value === "number" ? FieldValue.increment(value) : toIncrements(value)]));

/** The owner key of the marketplace's own months (never a module or publisher id). */
const MARKETPLACE = "*";

/** Counts as the increments of month documents: one set of nested increments per document key. */
function monthIncrements(counts: readonly MetricCount[], keyOf: (count: MetricCount) => string | null, splits = { version: true }): Map<string, { owner: string; month: string; days: Nested }> {
  const documents = new Map<string, { owner: string; month: string; days: Nested }>();
  for (const count of counts) {
    const owner = keyOf(count);
    if (count.amount === 0 || owner === null) continue;
    const month = count.day.slice(0, 7);
    const key = `${owner}_${month}`;
    const document = documents.get(key) ?? { owner, month, days: {} };
    documents.set(key, document);
    const base = [count.day.slice(8, 10), count.metric];
    if (!count.onlySplits) increment(document.days, [...base, "t", ...(count.currency ? [count.currency] : [])], count.amount);
    if (count.version !== undefined && splits.version) increment(document.days, [...base, "v", count.version], count.amount);
    if (count.platform !== undefined) increment(document.days, [...base, "p", count.platform], count.amount);
  }
  return documents;
}

export const metricCounts = oncePerDatabase((db: Firestore) => {
  const modules = db.collection("metricMonths");
  const publishers = db.collection("publisherMetricMonths");
  const marketplace = db.collection("marketplaceMetricMonths");
  const read = (snapshot: FirebaseFirestore.DocumentSnapshot): MetricMonth | null => {
    const stored = readDocument(monthDocument, snapshot);
    if (!stored) return null;
    const cells = new Map<string, Map<string, DayCell>>();
    for (const [day, metrics] of Object.entries(stored.days)) {
      cells.set(day, new Map(Object.entries(metrics).map(([metric, { t, v, p }]) => [metric, { total: t, ...(v ? { version: v } : {}), ...(p ? { platform: p } : {}) }])));
    }
    return { month: stored.month, cells };
  };
  const monthRef = (collection: FirebaseFirestore.CollectionReference, owner: string, month: string) => documentAt(collection, owner === MARKETPLACE ? month : `${owner}_${month}`);
  const getMonths = async (collection: FirebaseFirestore.CollectionReference, owners: readonly string[], months: readonly string[]) => {
    const refs = owners.flatMap((owner) => months.map((month) => monthRef(collection, owner, month)));
    if (refs.length === 0) return [];
    return (await db.getAll(...refs)).map(read).filter((month): month is MetricMonth => month !== null);
  };
  return {
    /**
     * Adds counts to their modules' months and to their publishers' (`publisherOf`; a module
     * without one counts for itself only), in the folder's transaction: one merge per document,
     * increments only.
     */
    applyIn(tx: Transaction | WriteBatch, counts: readonly MetricCount[], publisherOf: ReadonlyMap<string, string | null>): void {
      const write = (collection: FirebaseFirestore.CollectionReference, documents: Map<string, { owner: string; month: string; days: Nested }>) => {
        for (const { owner, month, days } of documents.values()) (tx as WriteBatch).set(monthRef(collection, owner, month), { month, days: toIncrements(days) }, { merge: true });
      };
      write(modules, monthIncrements(counts, (count) => count.moduleId));
      write(publishers, monthIncrements(counts, (count) => publisherOf.get(count.moduleId) ?? null));
      // Versions are a module's own: the marketplace's months are split by platform only.
      write(marketplace, monthIncrements(counts, () => MARKETPLACE, { version: false }));
    },
    ...withDeadlines("Firestore", {
      /** The months of these modules, one document each, in one batched read (absent months are left out). */
      months: (moduleIds: readonly string[], months: readonly string[]): Promise<MetricMonth[]> => getMonths(modules, moduleIds, months),
      /** A publisher's months, summed over its modules: one document each. */
      publisherMonths: (publisherId: string, months: readonly string[]): Promise<MetricMonth[]> => getMonths(publishers, [publisherId], months),
      /** The whole marketplace's months: the operators' view, one document each. */
      marketplaceMonths: (months: readonly string[]): Promise<MetricMonth[]> => getMonths(marketplace, [MARKETPLACE], months),
    }),
  };
});
