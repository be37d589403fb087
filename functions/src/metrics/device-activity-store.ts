import { createHash } from "node:crypto";
import type { Firestore, Transaction } from "firebase-admin/firestore";
import { z } from "zod";
import { withDeadlines } from "../core/deadline";
import { documentAt, oncePerDatabase, readDocument } from "../core/documents";

/**
 * `deviceActivity/{sha256 of module, user and device}`: the last UTC day a device confirmed or
 * checked a module for updates (§28), with the version and platform it reported, so that each
 * device counts once a day among a module's active devices, whatever the number of checks. A
 * removed device keeps its document with `lastDay: null`. Never names the user or device in clear.
 */

const activityDocument = z.object({ moduleId: z.string(), lastDay: z.string().nullable(), version: z.string(), platform: z.string() });
export type DeviceActivity = z.output<typeof activityDocument>;

export const deviceActivityStore = oncePerDatabase((db: Firestore) => {
  const collection = db.collection("deviceActivity");
  const ref = (moduleId: string, uid: string, deviceId: string) => documentAt(collection, createHash("sha256").update(`${moduleId}\n${uid}\n${deviceId}`).digest("hex"));
  return {
    ref,
    async getIn(tx: Transaction, moduleId: string, uid: string, deviceId: string): Promise<DeviceActivity | null> {
      return readDocument(activityDocument, await tx.get(ref(moduleId, uid, deviceId)));
    },
    ...withDeadlines("Firestore", {
      /** The activities of these devices, outside a transaction (to see whether anything would change). */
      async getAll(keys: { moduleId: string; uid: string; deviceId: string }[]): Promise<(DeviceActivity | null)[]> {
        if (keys.length === 0) return [];
        return (await db.getAll(...keys.map((key) => ref(key.moduleId, key.uid, key.deviceId)))).map((snapshot) => readDocument(activityDocument, snapshot));
      },
    }),
    async getAllIn(tx: Transaction, keys: { moduleId: string; uid: string; deviceId: string }[]): Promise<(DeviceActivity | null)[]> {
      if (keys.length === 0) return [];
      return (await tx.getAll(...keys.map((key) => ref(key.moduleId, key.uid, key.deviceId)))).map((snapshot) => readDocument(activityDocument, snapshot));
    },
    setIn(tx: Transaction, key: { moduleId: string; uid: string; deviceId: string }, activity: DeviceActivity): void {
      tx.set(ref(key.moduleId, key.uid, key.deviceId), activity);
    },
  };
});
