import { createHash, randomUUID } from "node:crypto";
import { FieldValue, Timestamp, type DocumentReference, type Firestore, type Transaction, type WriteBatch } from "firebase-admin/firestore";
import type { CommitsWithChange } from "./audit-log";
import { z } from "zod";
import { withDeadlines } from "./deadline";
import { documentAt, isAlreadyExists, isFailedPrecondition, readDocument, timestamp, oncePerDatabase } from "./documents";

/**
 * `idempotencyKeys/{sha256(scope, key)}`: one caller's `Idempotency-Key` (contract §1, "Safe
 * retries"): which request first came with it (its fingerprint), which attempt holds it and until
 * when, whether its change has committed (`committed`: written in the change's own batch or
 * transaction), and once done, the answer to replay (`done`: written with the change that gives
 * it, or after it by the request). Kept 24 hours: `expireAt` is the
 * collection's TTL field (docs/deploy.md), and an expired record is taken over.
 */

const keyDocument = z.object({
  scope: z.string(),
  fingerprint: z.string(),
  state: z.enum(["running", "committed", "done"]),
  /** Which attempt holds the key (missing on records written before attempts were named). */
  attempt: z.string().optional(),
  /** While running or committed: until when this attempt holds the key; after it, the attempt is taken for dead. */
  leaseUntil: timestamp.optional(),
  status: z.number().int().optional(),
  /** The answer's JSON body as sent, with the secrets it showed once set to null; "" for none. */
  body: z.string().optional(),
  headers: z.record(z.string(), z.string()).optional(),
  createdAt: timestamp,
  expireAt: timestamp,
});

export interface StoredAnswer {
  status: number;
  /** The JSON text of the body, "" when the answer had none. */
  body: string;
  /** The headers the route set on its answer (e.g. Location). */
  headers: Record<string, string>;
}

export type KeyRecord =
  | { state: "running" | "committed"; fingerprint: string; leaseUntil: Date; expireAt: Date }
  | { state: "done"; fingerprint: string; answer: StoredAnswer; expireAt: Date };

/**
 * A claim on a key: the document as of the write that claimed it (the change's commit is
 * conditional on it: an attempt whose key was taken over commits nothing), and the attempt's name
 * (recording the answer or giving the key up checks it).
 */
export interface KeyClaim {
  ref: DocumentReference;
  claimedAt: Timestamp;
  attempt: string;
}

export const IDEMPOTENCY_KEY_LIFETIME_MS = 24 * 60 * 60 * 1000;

export const idempotencyKeyStore = oncePerDatabase((db: Firestore) => {
  const collection = db.collection("idempotencyKeys");
  // The id is a hash: a caller's key may hold any printable character, and names no one else's.
  const refOf = (scope: string, key: string) => documentAt(collection, createHash("sha256").update(`${scope}\n${key}`).digest("hex"));
  const running = (scope: string, fingerprint: string, attempt: string, now: Date, leaseUntil: Date) => ({
    scope,
    fingerprint,
    state: "running",
    attempt,
    leaseUntil: Timestamp.fromDate(leaseUntil),
    createdAt: Timestamp.fromDate(now),
    expireAt: Timestamp.fromMillis(now.getTime() + IDEMPOTENCY_KEY_LIFETIME_MS),
  });
  return withDeadlines("Firestore", {
    /** Claims a key no one holds: the claim, or null when the key's document exists already. */
    async claim(scope: string, key: string, fingerprint: string, now: Date, leaseUntil: Date): Promise<KeyClaim | null> {
      const ref = refOf(scope, key);
      const attempt = randomUUID();
      try {
        const written = await ref.create(running(scope, fingerprint, attempt, now, leaseUntil));
        return { ref, claimedAt: written.writeTime, attempt };
      } catch (error) {
        if (isAlreadyExists(error)) return null;
        throw error;
      }
    },
    /** The key's record, and the document's update time to take it over with; null when absent. */
    async read(scope: string, key: string): Promise<{ record: KeyRecord; updateTime: Timestamp } | null> {
      const snapshot = await refOf(scope, key).get();
      const stored = readDocument(keyDocument, snapshot);
      if (!stored) return null;
      const base = { fingerprint: stored.fingerprint, expireAt: stored.expireAt.toDate() };
      const record: KeyRecord =
        stored.state === "done"
          ? { ...base, state: "done", answer: { status: stored.status ?? 200, body: stored.body ?? "", headers: stored.headers ?? {} } }
          : { ...base, state: stored.state, leaseUntil: stored.leaseUntil?.toDate() ?? new Date(0) };
      return { record, updateTime: snapshot.updateTime! };
    },
    /** Takes over an expired record or a dead attempt's, if nobody changed it since `updateTime`; null if someone did. */
    async takeOver(scope: string, key: string, updateTime: Timestamp, fingerprint: string, now: Date, leaseUntil: Date): Promise<KeyClaim | null> {
      const ref = refOf(scope, key);
      const attempt = randomUUID();
      try {
        const cleared = { status: FieldValue.delete(), body: FieldValue.delete(), headers: FieldValue.delete() };
        const written = await ref.update({ ...running(scope, fingerprint, attempt, now, leaseUntil), ...cleared }, { lastUpdateTime: updateTime });
        return { ref, claimedAt: written.writeTime, attempt };
      } catch (error) {
        if (isFailedPrecondition(error)) return null;
        throw error;
      }
    },
    /**
     * Records the answer of the attempt that holds the claim (not if another took the key over),
     * unless its change already committed it.
     */
    async finish(claim: KeyClaim, answer: StoredAnswer): Promise<void> {
      await db.runTransaction(async (tx) => {
        const snapshot = await tx.get(claim.ref);
        if (snapshot.get("attempt") !== claim.attempt || snapshot.get("state") === "done") return;
        tx.update(claim.ref, doneWith(answer));
      });
    },
    /** Gives the key up after an attempt that changed nothing, so that a retry runs again; a key whose change committed is kept. */
    async release(claim: KeyClaim): Promise<void> {
      await db.runTransaction(async (tx) => {
        const snapshot = await tx.get(claim.ref);
        if (snapshot.get("attempt") === claim.attempt && snapshot.get("state") === "running") tx.delete(claim.ref);
      });
    },
  });
});

const doneWith = (answer: StoredAnswer) => ({ state: "done", leaseUntil: FieldValue.delete(), status: answer.status, body: answer.body, headers: answer.headers });

/**
 * Marks the claim's key in a change's batch or transaction: `done` with the request's answer when
 * the change gives it (`answerOf`: the answer for the body the change hands over, or null when it
 * gives none), otherwise `committed`. The first change of an attempt commits only while the claim
 * holds (an attempt whose key was taken over after its lease commits nothing); once it committed,
 * the key is never taken over again, so an attempt's later changes mark it unconditionally, and
 * one without an answer leaves an answer already given in place.
 */
export function commitMark(claim: KeyClaim, answerOf: (body: unknown) => StoredAnswer | null): CommitsWithChange {
  let first: WriteBatch | Transaction | null = null;
  let answered = false;
  return {
    addTo(writer, body) {
      // One change's writer may be told more than once (several entries; a transaction's retries run again): each adds the same write.
      first ??= writer;
      const answer = answerOf(body);
      if (writer !== first && !answer && answered) return;
      answered ||= answer !== null;
      const mark = answer ? doneWith(answer) : { state: "committed" };
      if (writer === first) (writer as WriteBatch).update(claim.ref, mark, { lastUpdateTime: claim.claimedAt });
      else (writer as WriteBatch).update(claim.ref, mark);
    },
  };
}
