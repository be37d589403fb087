import { FieldValue, type Firestore, type Transaction, type WriteBatch } from "firebase-admin/firestore";
import { z } from "zod";
import { withDeadlines } from "../core/deadline";
import { documentAt, oncePerDatabase, readDocument } from "../core/documents";
import type { DayCell } from "./rules";

/**
 * `metricMonths/{moduleId}_{YYYY-MM}`: a module's analytics of one UTC month (contract §28), one
 * document, so that a 25-month daily query reads 25 documents. Each change that counts something
 * (a confirm from a new device, a removal, a page view, a sale, a refund) adds its counts in its
 * own batch or transaction (`addIn`), as blind increments that take no lock; downloads come in
 * the download counter's batches. A day's figure of a metric is `days.DD.<metric>.t` (a number,
 * or `{ currency: minor units }` for money), split in `.v.<version>` and `.p.<platform>`. The
 * names and rules of the metrics are `rules.ts`'s; the API that reads them is analytics/.
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
const monthDocument = z.object({ moduleId: z.string(), month: z.string(), days: z.record(z.string(), z.record(z.string(), cell)).default({}) });

/** A month's cells: `cells.get("DD")?.get(metric)`. */
export interface MetricMonth {
  moduleId: string;
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

export const metricCounts = oncePerDatabase((db: Firestore) => {
  const collection = db.collection("metricMonths");
  const ref = (moduleId: string, month: string) => documentAt(collection, `${moduleId}_${month}`);
  const read = (snapshot: FirebaseFirestore.DocumentSnapshot): MetricMonth | null => {
    const stored = readDocument(monthDocument, snapshot);
    if (!stored) return null;
    const cells = new Map<string, Map<string, DayCell>>();
    for (const [day, metrics] of Object.entries(stored.days)) {
      cells.set(day, new Map(Object.entries(metrics).map(([metric, { t, v, p }]) => [metric, { total: t, ...(v ? { version: v } : {}), ...(p ? { platform: p } : {}) }])));
    }
    return { moduleId: stored.moduleId, month: stored.month, cells };
  };
  return {
    /** Adds counts to their months' documents in the caller's batch or transaction: one merge per document, increments only. */
    addIn(writer: Transaction | WriteBatch, counts: readonly MetricCount[]): void {
      const documents = new Map<string, { moduleId: string; month: string; days: Nested }>();
      for (const count of counts) {
        if (count.amount === 0) continue;
        const month = count.day.slice(0, 7);
        const key = `${count.moduleId}_${month}`;
        const document = documents.get(key) ?? { moduleId: count.moduleId, month, days: {} };
        documents.set(key, document);
        const base = [count.day.slice(8, 10), count.metric];
        if (!count.onlySplits) increment(document.days, [...base, "t", ...(count.currency ? [count.currency] : [])], count.amount);
        if (count.version !== undefined) increment(document.days, [...base, "v", count.version], count.amount);
        if (count.platform !== undefined) increment(document.days, [...base, "p", count.platform], count.amount);
      }
      for (const { moduleId, month, days } of documents.values()) {
        (writer as WriteBatch).set(ref(moduleId, month), { moduleId, month, days: toIncrements(days) }, { merge: true });
      }
    },
    ...withDeadlines("Firestore", {
      /** The months of these modules, one document each, in one batched read (absent months are left out). */
      async months(moduleIds: readonly string[], months: readonly string[]): Promise<MetricMonth[]> {
        const refs = moduleIds.flatMap((moduleId) => months.map((month) => ref(moduleId, month)));
        if (refs.length === 0) return [];
        return (await db.getAll(...refs)).map(read).filter((month): month is MetricMonth => month !== null);
      },
      /** Every module's months from `from` to `to` (YYYY-MM, inclusive): the operators' view of the whole marketplace. */
      async allMonths(from: string, to: string): Promise<MetricMonth[]> {
        const snapshot = await collection.where("month", ">=", from).where("month", "<=", to).get();
        return snapshot.docs.map(read).filter((month): month is MetricMonth => month !== null);
      },
    }),
  };
});
