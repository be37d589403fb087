import { Timestamp, type DocumentSnapshot, type Firestore, type Transaction } from "firebase-admin/firestore";
import { z } from "zod";
import { withinDeadline } from "../core/deadline";
import { documentAt, readDocument, timestamp, oncePerDatabase } from "../core/documents";
import { MAX_IN_FLIGHT_PER_ENDPOINT, slotFree, type InFlightSlot } from "./rules";

/**
 * `webhookEndpoints/{endpointId}/inFlight/{0..9}`: an endpoint's attempts in flight, one document
 * per slot while it is held (contract §21: at most 10 at once to one endpoint, whichever instances
 * send them). An attempt takes a slot in the transaction that claims its delivery, by creating the
 * slot's document (two claims of one slot: the second's commit fails, and it tries another), and
 * deletes it in the transaction that records the attempt. The slot's lease is the delivery's: the slot of an
 * instance that died mid-attempt is taken over when the lease has ended.
 */

const slotDocument = z.object({ deliveryId: z.string(), leaseUntil: timestamp, claim: z.string().optional() });

export type SlotState = { slot: number; held: InFlightSlot | null };

export const inFlightStore = oncePerDatabase((db: Firestore) => {
  const ref = (endpointId: string, slot: number) => documentAt(documentAt(db.collection("webhookEndpoints"), endpointId).collection("inFlight"), String(slot));
  const read = (snapshot: DocumentSnapshot): InFlightSlot | null => {
    const stored = readDocument(slotDocument, snapshot);
    return stored && { deliveryId: stored.deliveryId, leaseUntil: stored.leaseUntil.toDate(), claim: stored.claim ?? null };
  };
  return {
    /** The slots an attempt may take now (free, or held past their lease), read outside any transaction, in random order so that claims spread over them. */
    async freeSlots(endpointId: string, now: Date): Promise<SlotState[]> {
      const numbers = Array.from({ length: MAX_IN_FLIGHT_PER_ENDPOINT }, (_, slot) => slot);
      const snapshots = await withinDeadline("Firestore", db.getAll(...numbers.map((slot) => ref(endpointId, slot))));
      const free = numbers.map((slot) => ({ slot, held: read(snapshots[slot]) })).filter(({ held }) => slotFree(held, now));
      for (let index = free.length - 1; index > 0; index -= 1) {
        const other = Math.floor(Math.random() * (index + 1));
        [free[index], free[other]] = [free[other], free[index]];
      }
      return free;
    },
    /**
     * Takes a slot seen free: a free one by creating it (the commit fails with ALREADY_EXISTS when
     * another claim took it first); one held past its lease by reading it in the transaction, so
     * that only one claim takes it over. False when it is no longer free.
     */
    async holdIn(tx: Transaction, endpointId: string, seen: SlotState, hold: { deliveryId: string; claim: string }, now: Date, leaseUntil: Date): Promise<boolean> {
      const slot = ref(endpointId, seen.slot);
      const data = { ...hold, leaseUntil: Timestamp.fromDate(leaseUntil) };
      if (seen.held === null) {
        tx.create(slot, data);
        return true;
      }
      if (!slotFree(read(await tx.get(slot)), now)) return false;
      tx.set(slot, data);
      return true;
    },
    /** A slot as the transaction reads it (claimants of a free slot never read it: only the attempt that holds it, and a takeover). */
    async getIn(tx: Transaction, endpointId: string, slot: number): Promise<InFlightSlot | null> {
      return read(await tx.get(ref(endpointId, slot)));
    },
    /** Gives a slot back: the transaction has read that its attempt still holds it (its claim). */
    releaseIn(tx: Transaction, endpointId: string, slot: number): void {
      tx.delete(ref(endpointId, slot));
    },
    /** With the endpoint: its slots go too. */
    deleteAllIn(tx: Transaction, endpointId: string): void {
      for (let slot = 0; slot < MAX_IN_FLIGHT_PER_ENDPOINT; slot += 1) tx.delete(ref(endpointId, slot));
    },
  };
});
