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
  const read = (snapshot: FirebaseFirestore.DocumentSnapshot): DeviceRecord => {
    const stored = readDocument(deviceDocument, snapshot);
    return {
      modules: new Map(Object.entries(stored?.modules ?? {}).map(([moduleId, activity]) => [moduleId, { moduleId, ...activity }])),
      counts: stored?.counts ?? [],
    };
  };
  return {
    /** The device's record, read (and held) in the caller's transaction; an unseen device has none. */
    async getIn(tx: Transaction, key: DeviceKey): Promise<DeviceRecord> {
      return read(await tx.get(ref(key)));
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
