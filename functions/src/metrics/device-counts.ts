import type { Firestore, Transaction } from "firebase-admin/firestore";
import { withinDeadline } from "../core/deadline";
import { activityCounts, removalCounts } from "./counting";
import { deviceActivityStore, type DeviceActivity } from "./device-activity-store";
import { metricCounts, type MetricCount } from "./metric-store";
import { UNKNOWN } from "./rules";

/**
 * Counting a device's confirms, update checks and removal (§28) inside the caller's transaction:
 * its last activity is read there, so that concurrent requests of one device count it once.
 */

export interface DeviceKey {
  moduleId: string;
  uid: string;
  deviceId: string;
}

/** A confirm on a device (an install when the device is new to the activation), or an update check that names a device. */
export async function deviceSeenIn(tx: Transaction, db: Firestore, key: DeviceKey, seen: { version: string; platform?: string; today: string; install: boolean }): Promise<void> {
  const activities = deviceActivityStore(db);
  const before = await activities.getIn(tx, key.moduleId, key.uid, key.deviceId);
  const { activity, counts } = activityCounts(before, { moduleId: key.moduleId, version: seen.version, platform: seen.platform, today: seen.today });
  const installs: MetricCount[] = seen.install ? [{ moduleId: key.moduleId, day: seen.today, metric: "installs", amount: 1, version: seen.version, platform: activity.platform }] : [];
  activities.setIn(tx, key, activity);
  metricCounts(db).addIn(tx, [...counts, ...installs]);
}

/** A device removed from an activation: an uninstall, and no longer active from today. */
export async function deviceRemovedIn(tx: Transaction, db: Firestore, key: DeviceKey, removed: { version: string; today: string }): Promise<void> {
  const activities = deviceActivityStore(db);
  const before = await activities.getIn(tx, key.moduleId, key.uid, key.deviceId);
  const { activity, counts } = removalCounts(before, removed.today);
  if (activity) activities.setIn(tx, key, activity);
  metricCounts(db).addIn(tx, [...counts, { moduleId: key.moduleId, day: removed.today, metric: "uninstalls", amount: 1, version: removed.version, platform: before?.platform ?? UNKNOWN }]);
}

/**
 * An update check naming a device (§28): each installed module it names (the caller chose those
 * whose activation holds the device, at a published version) counts the device among its active
 * devices, once a day. The
 * devices' last activity is read first without a transaction: a check that changes nothing (the
 * device was seen today, on the same version and platform) writes nothing; one that does runs
 * one transaction for the whole check, which reads them again.
 */
export async function updateCheckSeen(db: Firestore, who: { uid: string; deviceId: string; platform?: string }, installed: { moduleId: string; version: string }[], today: string): Promise<void> {
  const items = [...new Map(installed.map((item) => [item.moduleId, item])).values()];
  if (items.length === 0) return;
  const activities = deviceActivityStore(db);
  const keys = items.map((item) => ({ moduleId: item.moduleId, uid: who.uid, deviceId: who.deviceId }));
  const unchanged = (before: DeviceActivity | null, item: { version: string }) =>
    before?.lastDay === today && before.version === item.version && (who.platform === undefined || before.platform === who.platform);
  if ((await activities.getAll(keys)).every((before, index) => unchanged(before, items[index]))) return;
  await withinDeadline("Firestore (analytics)", db.runTransaction(async (tx) => {
    const before = await activities.getAllIn(tx, keys);
    const counts: MetricCount[] = [];
    items.forEach((item, index) => {
      if (unchanged(before[index], item)) return;
      const seen = activityCounts(before[index], { moduleId: item.moduleId, version: item.version, platform: who.platform, today });
      activities.setIn(tx, keys[index], seen.activity);
      counts.push(...seen.counts);
    });
    metricCounts(db).addIn(tx, counts);
  }));
}
