import { Timestamp, type DocumentSnapshot, type Firestore, type Transaction } from "firebase-admin/firestore";
import { z } from "zod";
import { instanceQueue } from "../core/concurrency";
import { withDeadlines } from "../core/deadline";
import { documentAt, readDocument, timestamp, oncePerDatabase } from "../core/documents";

/**
 * `users/{uid}/activations/{moduleId}`: which modules a user confirmed, and on which devices
 * (contract §10), written by the service.
 */

const deviceEntry = z.object({ activatedAt: timestamp, lastSeenAt: timestamp, version: z.string() });

const activationDocument = z.object({
  moduleId: z.string(),
  version: z.string(),
  deviceId: z.string().optional(),
  activatedAt: timestamp,
  updatedAt: timestamp,
  devices: z.record(z.string(), deviceEntry).optional(),
});

export interface DeviceActivationRecord {
  deviceId: string;
  activatedAt: Date;
  lastSeenAt: Date;
  version: string;
}

export interface ActivationRecord {
  moduleId: string;
  version: string;
  /** The device of the latest confirmation that named one. */
  deviceId: string | null;
  activatedAt: Date;
  updatedAt: Date;
  /** Oldest first. */
  devices: DeviceActivationRecord[];
}

/** Transactions on one activation from several instances at once retry this often before giving up. */
const TRANSACTION_ATTEMPTS = 10;

export const activationStore = oncePerDatabase((db: Firestore) => {
  // Confirmations and releases of one activation in one instance take turns (core/concurrency.ts).
  const turns = instanceQueue(db, "activations");
  const collection = (uid: string) => documentAt(db.collection("users"), uid).collection("activations");
  const read = (snapshot: DocumentSnapshot): ActivationRecord | null => {
    const stored = readDocument(activationDocument, snapshot);
    return (
      stored && {
        moduleId: stored.moduleId,
        version: stored.version,
        deviceId: stored.deviceId ?? null,
        activatedAt: stored.activatedAt.toDate(),
        updatedAt: stored.updatedAt.toDate(),
        devices: Object.entries(stored.devices ?? {})
          .map(([deviceId, device]) => ({
            deviceId,
            activatedAt: device.activatedAt.toDate(),
            lastSeenAt: device.lastSeenAt.toDate(),
            version: device.version,
          }))
          .sort((a, b) => a.activatedAt.getTime() - b.activatedAt.getTime() || a.deviceId.localeCompare(b.deviceId)),
      }
    );
  };
  const toDocument = (activation: ActivationRecord) => ({
    moduleId: activation.moduleId,
    version: activation.version,
    ...(activation.deviceId ? { deviceId: activation.deviceId } : {}),
    activatedAt: Timestamp.fromDate(activation.activatedAt),
    updatedAt: Timestamp.fromDate(activation.updatedAt),
    devices: Object.fromEntries(
      activation.devices.map((device) => [
        device.deviceId,
        { activatedAt: Timestamp.fromDate(device.activatedAt), lastSeenAt: Timestamp.fromDate(device.lastSeenAt), version: device.version },
      ]),
    ),
  });
  return withDeadlines("Firestore", {
    async get(uid: string, moduleId: string): Promise<ActivationRecord | null> {
      return read(await documentAt(collection(uid), moduleId).get());
    },
    /** A user's activations of these modules (null where there is none), in one batched read. */
    async getMany(uid: string, moduleIds: readonly string[]): Promise<(ActivationRecord | null)[]> {
      if (moduleIds.length === 0) return [];
      return (await db.getAll(...moduleIds.map((moduleId) => documentAt(collection(uid), moduleId)))).map(read);
    },
    /** Every activation of a user, oldest first. */
    async list(uid: string): Promise<ActivationRecord[]> {
      return (await collection(uid).orderBy("activatedAt").get()).docs.map((snapshot) => read(snapshot)!);
    },
    /** Creates the first activation; rejects (ALREADY_EXISTS) when there is one. */
    async create(uid: string, activation: ActivationRecord): Promise<void> {
      await documentAt(collection(uid), activation.moduleId).create(toDocument(activation));
    },
    /** A repeat confirmation without a device: the version and time move; the rest stays. */
    async refresh(uid: string, activation: Pick<ActivationRecord, "moduleId" | "version" | "updatedAt">): Promise<void> {
      await documentAt(collection(uid), activation.moduleId).update({ version: activation.version, updatedAt: Timestamp.fromDate(activation.updatedAt) });
    },
    /**
     * Reads the activation and writes what `change` makes of it, in one transaction, so that
     * decisions over the whole device list (the device limit) hold under concurrent requests.
     * `change` may throw to write nothing. `alongside` reads and writes what commits with the
     * change (its analytics' counts, §28), in the same transaction.
     */
    async change(
      uid: string,
      moduleId: string,
      change: (current: ActivationRecord | null) => ActivationRecord,
      alongside?: (tx: Transaction, before: ActivationRecord | null, after: ActivationRecord) => Promise<void>,
    ): Promise<ActivationRecord> {
      const ref = documentAt(collection(uid), moduleId);
      return turns(ref.path, () =>
        db.runTransaction(
          async (tx) => {
            const current = read(await tx.get(ref));
            const next = change(current);
            await alongside?.(tx, current, next);
            tx.set(ref, toDocument(next));
            return next;
          },
          { maxAttempts: TRANSACTION_ATTEMPTS },
        ),
      );
    },
  });
});
