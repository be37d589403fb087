import { FieldValue, type DocumentSnapshot, type Firestore, type Transaction } from "firebase-admin/firestore";
import { z } from "zod";
import { SEAT_SHARDS, type SeatShardState } from "../access/seat-shards";
import { withDeadlines } from "../core/deadline";
import { documentAt, oncePerDatabase, readDocument } from "../core/documents";

/**
 * `businesses/{businessId}/seatShards/{0..15}`: the business's seats in use, spread over shards,
 * each with its share of the paid quantity (access/seat-shards.ts says how they are used). A
 * member's seat is counted in the shard its member document names (`seatShard`); member-store's
 * `put` moves the counts with every seat given or taken, in the change's own transaction.
 */

const seatShardDocument = z.object({
  used: z.number().int().optional(),
  cap: z.number().int().nonnegative().optional(),
  q: z.number().int().nonnegative().optional(),
});

export const seatShardStore = oncePerDatabase((db: Firestore) => {
  const shards = (businessId: string) => documentAt(db.collection("businesses"), businessId).collection("seatShards");
  const ref = (businessId: string, index: number) => documentAt(shards(businessId), String(index));
  const read = (snapshot: DocumentSnapshot, index: number): SeatShardState => {
    const stored = readDocument(seatShardDocument, snapshot);
    return { index, used: stored?.used ?? 0, cap: stored?.cap ?? null, q: stored?.q ?? null };
  };
  const allRefs = (businessId: string) => Array.from({ length: SEAT_SHARDS }, (_, index) => ref(businessId, index));
  return withDeadlines("Firestore", {
    async get(tx: Transaction, businessId: string, index: number): Promise<SeatShardState> {
      return read(await tx.get(ref(businessId, index)), index);
    },
    /** Every shard, in index order (in a transaction: so that a decision on the total is exact). */
    async all(tx: Transaction | null, businessId: string): Promise<SeatShardState[]> {
      const snapshots = tx ? await tx.getAll(...allRefs(businessId)) : await db.getAll(...allRefs(businessId));
      return snapshots.map((snapshot, index) => read(snapshot, index));
    },
    /** Moves a shard's count by `delta` seats (a blind increment: the change read it when it gives a seat under a quantity). */
    move(tx: Transaction, businessId: string, index: number, delta: number): void {
      tx.set(ref(businessId, index), { used: FieldValue.increment(delta) }, { merge: true });
    },
    /** New shares of `quantity`, one per shard in index order (the transaction read every shard). */
    share(tx: Transaction, businessId: string, caps: readonly number[], quantity: number): void {
      caps.forEach((cap, index) => tx.set(ref(businessId, index), { cap, q: quantity }, { merge: true }));
    },
  });
});
