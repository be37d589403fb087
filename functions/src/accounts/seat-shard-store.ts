import { FieldValue, type DocumentSnapshot, type Firestore, type Timestamp, type Transaction } from "firebase-admin/firestore";
import { z } from "zod";
import { SEAT_SHARDS, sharesOf, stampedFor, type SeatShardState } from "../access/seat-shards";
import { RETRY_AFTER_SECONDS, withDeadlines } from "../core/deadline";
import { unavailable } from "../core/errors";
import { documentAt, isFailedPrecondition, oncePerDatabase, readDocument } from "../core/documents";
import { subscriptionStore } from "./subscription-store";

/**
 * `businesses/{businessId}/seatShards/{0..255}`: the business's seats in use, spread over shards,
 * each with its share of the paid quantity (access/seat-shards.ts says how they are used). A
 * member's seat is counted in the shard its member document names (`seatShard`); member-store's
 * `put` moves the counts with every seat given or taken, in the change's own transaction.
 *
 * A seat given where the shard it is offered in first has room is decided optimistically: the shard is read
 * without a lock (`peek`) and the change's write of it carries the time of that read as its
 * precondition (`guard`), so that two changes meeting in one shard never wait on each other's
 * locks: the one that commits second fails with FAILED_PRECONDITION and runs again
 * (businesses/membership.ts inBusinessTransaction).
 */

/** Preconditions of the shard writes a transaction will make: the shard as it was read, per shard path. */
const guards = new WeakMap<Transaction, Map<string, Timestamp>>();

const seatShardDocument = z.object({
  used: z.number().int().optional(),
  cap: z.number().int().nonnegative().optional(),
  q: z.number().int().nonnegative().optional(),
});

/** A shard read without a lock, with when it last changed (null: it does not exist). */
export interface PeekedShard {
  shard: SeatShardState;
  updateTime: Timestamp | null;
}

/** How often a change whose seat shard moved under it runs again before its caller hears of it. */
const GUARDED_ATTEMPTS = 8;

/**
 * Thrown by a change that would give a seat while the shards are not shared out for the
 * quantity (it changed, and the seat balancer has not run yet): `seatTransaction` shares them
 * out in a transaction of its own, then runs the change again, which then takes a shard of its
 * own instead of reading, and holding, every one.
 */
export class SeatSharesNeeded extends Error {
  constructor(readonly businessId: string) {
    super(`The seat shards of business '${businessId}' are not shared out for its quantity.`);
  }
}

/**
 * A transaction that may give a seat: run again (with a few milliseconds' jitter) when a guarded
 * shard changed between its read and the commit, as Firestore runs a transaction again when it
 * aborts, or once the shards are shared out when they were not. `change` must be safe to run
 * again, as any transaction's is.
 */
export async function seatTransaction<T>(db: Firestore, change: (tx: Transaction) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await db.runTransaction(change);
    } catch (error) {
      const sharesNeeded = error instanceof SeatSharesNeeded;
      if (!sharesNeeded && !isFailedPrecondition(error)) throw error;
      if (attempt >= GUARDED_ATTEMPTS) throw sharesNeeded ? unavailable("The business's seats are being worked out for its quantity; try again in a moment.", RETRY_AFTER_SECONDS) : error;
      if (sharesNeeded) await shareSeats(db, (error as SeatSharesNeeded).businessId);
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * attempt));
    }
  }
}

/** The sharing out running on this instance, by business: changes that meet one unshared business wait for one transaction, not one each. */
const sharing = new Map<string, Promise<void>>();

/** Shares a business's shards out for its subscription's quantity, unless they are, or the seats in use exceed it (the balancer's part). */
function shareSeats(db: Firestore, businessId: string): Promise<void> {
  const running = sharing.get(businessId);
  if (running) return running;
  const work = shareOut(db, businessId).finally(() => sharing.delete(businessId));
  sharing.set(businessId, work);
  return work;
}

async function shareOut(db: Firestore, businessId: string): Promise<void> {
  await db.runTransaction(async (tx) => {
    const subscription = await subscriptionStore(db).get(tx, businessId);
    const quantity = subscription?.seats ?? null;
    if (quantity !== null) seatShardStore(db).shareOutIn(tx, businessId, await seatShardStore(db).all(tx, businessId), quantity);
  });
}

export const seatShardStore = oncePerDatabase((db: Firestore) => {
  const shards = (businessId: string) => documentAt(db.collection("businesses"), businessId).collection("seatShards");
  const ref = (businessId: string, index: number) => documentAt(shards(businessId), String(index));
  const read = (snapshot: DocumentSnapshot, index: number): SeatShardState => {
    const stored = readDocument(seatShardDocument, snapshot);
    return { index, used: stored?.used ?? 0, cap: stored?.cap ?? null, q: stored?.q ?? null };
  };
  const allRefs = (businessId: string) => Array.from({ length: SEAT_SHARDS }, (_, index) => ref(businessId, index));
  const peeked = (snapshot: DocumentSnapshot, index: number): PeekedShard => ({ shard: read(snapshot, index), updateTime: snapshot.updateTime ?? null });
  return withDeadlines("Firestore", {
    /** Every shard, in index order (in a transaction: so that a decision on the total is exact). */
    async all(tx: Transaction | null, businessId: string): Promise<SeatShardState[]> {
      const snapshots = tx ? await tx.getAll(...allRefs(businessId)) : await db.getAll(...allRefs(businessId));
      return snapshots.map((snapshot, index) => read(snapshot, index));
    },
    /** A shard read without a lock, with when it last changed (null: it does not exist). */
    async peek(businessId: string, index: number): Promise<PeekedShard> {
      return peeked(await ref(businessId, index).get(), index);
    },
    /** Every shard read without a lock, in index order, with when each last changed. */
    async peekAll(businessId: string): Promise<PeekedShard[]> {
      return (await db.getAll(...allRefs(businessId))).map(peeked);
    },
    /** The transaction's next write of this shard holds only if the shard has not changed since `updateTime` (the first guard set stays). */
    guard(tx: Transaction, businessId: string, index: number, updateTime: Timestamp): void {
      const held = guards.get(tx) ?? new Map<string, Timestamp>();
      guards.set(tx, held);
      const path = ref(businessId, index).path;
      if (!held.has(path)) held.set(path, updateTime);
    },
    /** Moves a shard's count by `delta` seats: an increment, conditional on the shard's guard when the change set one. */
    move(tx: Transaction, businessId: string, index: number, delta: number): void {
      const shard = ref(businessId, index);
      const guard = guards.get(tx)?.get(shard.path);
      if (guard) {
        guards.get(tx)!.delete(shard.path);
        tx.update(shard, { used: FieldValue.increment(delta) }, { lastUpdateTime: guard });
        return;
      }
      tx.set(shard, { used: FieldValue.increment(delta) }, { merge: true });
    },
    /**
     * Shares `quantity` out over the shards (as the transaction read them, every one), unless they
     * are shared out for it already or the seats in use exceed it (members must lose seats first).
     * Returns whether it wrote the shares.
     */
    shareOutIn(tx: Transaction, businessId: string, shards: readonly SeatShardState[], quantity: number): boolean {
      if (stampedFor(shards, quantity)) return false;
      const caps = sharesOf(shards.map((shard) => shard.used), quantity);
      caps?.forEach((cap, index) => tx.set(ref(businessId, index), { cap, q: quantity }, { merge: true }));
      return caps !== null;
    },
  });
});
