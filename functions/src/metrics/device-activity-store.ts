import { createHash } from "node:crypto";
import { FieldValue, type Firestore, type Transaction } from "firebase-admin/firestore";
import { z } from "zod";
import { withDeadlines } from "../core/deadline";
import { documentAt, oncePerDatabase, readDocument } from "../core/documents";
import type { MetricCount } from "./metric-store";
import { metricCountList, storedCounts } from "./pending-count-store";

/**
 * `deviceActivity/{sha256 of user and device}`: per module, the last UTC day a device confirmed
 * it or checked it for updates (§28), with the version and platform it reported, so that each
 * device counts once a day among a module's active devices, whatever the number of checks; a
 * removed device keeps its module with `lastDay: null`. One document per device, so that an update
 * check naming any number of modules writes one document, and that document also carries what
 * the device's changes counted until the count folder takes it (`counts`, with `countsPending`):
 * the device's own pending counts, committed with its activity. Never names the user or device in clear.
 */

const moduleActivity = z.object({ lastDay: z.string().nullable(), version: z.string(), platform: z.string() });
/** A module's activity on a device as kept before one document per device. */
const legacyDocument = z.object({ moduleId: z.string(), lastDay: z.string().nullable(), version: z.string(), platform: z.string() });
const deviceDocument = z.object({ modules: z.record(z.string(), moduleActivity), counts: metricCountList.optional(), countsPending: z.literal(true).optional() });

export interface DeviceActivity {
  moduleId: string;
  lastDay: string | null;
  version: string;
  platform: string;
}

export interface DeviceKey {
  uid: string;
  deviceId: string;
}

/** A device's activity per module, with the counts not yet folded. */
export interface DeviceRecord {
  modules: Map<string, DeviceActivity>;
  counts: MetricCount[];
}

export interface PendingDevice {
  ref: FirebaseFirestore.DocumentReference;
  counts: MetricCount[];
}

export const deviceActivityStore = oncePerDatabase((db: Firestore) => {
  const collection = db.collection("deviceActivity");
  const ref = ({ uid, deviceId }: DeviceKey) => documentAt(collection, createHash("sha256").update(`${uid}\n${deviceId}`).digest("hex"));
  /** Where a module's activity on a device was kept before one document per device. */
  const legacyRef = (moduleId: string, { uid, deviceId }: DeviceKey) => documentAt(collection, createHash("sha256").update(`${moduleId}\n${uid}\n${deviceId}`).digest("hex"));
  const read = (snapshot: FirebaseFirestore.DocumentSnapshot): DeviceRecord => {
    const stored = readDocument(deviceDocument, snapshot);
    return {
      modules: new Map(Object.entries(stored?.modules ?? {}).map(([moduleId, activity]) => [moduleId, { moduleId, ...activity }])),
      counts: stored?.counts ?? [],
    };
  };
  return {
    /**
     * The device's record, read (and held) in the caller's transaction; an unseen device has none.
     * A module of `moduleIds` it does not name yet is looked up where activity was kept before one
     * document per device (one per module, user and device), so that a device seen before the
     * change is not counted again; the next write carries it over.
     */
    async getIn(tx: Transaction, key: DeviceKey, moduleIds: readonly string[]): Promise<DeviceRecord> {
      const record = read(await tx.get(ref(key)));
      const unnamed = [...new Set(moduleIds)].filter((moduleId) => !record.modules.has(moduleId));
      if (unnamed.length === 0) return record;
      const earlier = await tx.getAll(...unnamed.map((moduleId) => legacyRef(moduleId, key)));
      earlier.forEach((snapshot, index) => {
        const stored = readDocument(legacyDocument, snapshot);
        if (stored) record.modules.set(unnamed[index], { moduleId: unnamed[index], lastDay: stored.lastDay, version: stored.version, platform: stored.platform });
      });
      return record;
    },
    ...withDeadlines("Firestore", {
      /** The device's record outside a transaction (to see whether a check would change anything). */
      async get(key: DeviceKey): Promise<DeviceRecord> {
        return read(await ref(key).get());
      },
    }),
    /** Writes the device's whole record: its activity, and its counts not yet folded with `added` after them. */
    setIn(tx: Transaction, key: DeviceKey, record: DeviceRecord, added: readonly MetricCount[]): void {
      const counts = [...record.counts, ...storedCounts(added)];
      const modules = Object.fromEntries([...record.modules].map(([moduleId, { lastDay, version, platform }]) => [moduleId, { lastDay, version, platform }]));
      tx.set(ref(key), { modules, ...(counts.length > 0 ? { counts, countsPending: true } : {}) });
    },
    /** Devices whose counts wait for the folder, read (and held) by its transaction. */
    async pendingIn(tx: Transaction, limit: number): Promise<PendingDevice[]> {
      const snapshot = await tx.get(collection.where("countsPending", "==", true).limit(limit));
      return snapshot.docs.map((doc) => ({ ref: doc.ref, counts: readDocument(deviceDocument, doc)!.counts ?? [] }));
    },
    /** The folder took these devices' counts. */
    clearIn(tx: Transaction, devices: readonly PendingDevice[]): void {
      for (const device of devices) tx.update(device.ref, { counts: FieldValue.delete(), countsPending: FieldValue.delete() });
    },
  };
});
