import type { Firestore, Transaction } from "firebase-admin/firestore";
import { withinDeadline } from "../core/deadline";
import { activityCounts, removalCounts } from "./counting";
import { deviceActivityStore, type DeviceActivity, type DeviceRecord } from "./device-activity-store";
import type { MetricCount } from "./metric-store";
import { UNKNOWN } from "./rules";

/**
 * Counting a device's confirms, update checks and removal (§28): its activity is read in the
 * transaction that writes it, so that concurrent requests of one device count it once, and what
 * they count is kept on the device's own document until the count folder takes it.
 */

export interface DeviceModuleKey {
  moduleId: string;
  uid: string;
  deviceId: string;
}

/** A confirm on a device (an install when the device is new to the activation), or an update check that names a device. */
export async function deviceSeenIn(tx: Transaction, db: Firestore, key: DeviceModuleKey, seen: { version: string; platform?: string; today: string; install: boolean }): Promise<void> {
  const devices = deviceActivityStore(db);
  const record = await devices.getIn(tx, key, [key.moduleId]);
  const { activity, counts } = activityCounts(record.modules.get(key.moduleId) ?? null, { moduleId: key.moduleId, version: seen.version, platform: seen.platform, today: seen.today });
  const installs: MetricCount[] = seen.install ? [{ moduleId: key.moduleId, day: seen.today, metric: "installs", amount: 1, version: seen.version, platform: activity.platform }] : [];
  record.modules.set(key.moduleId, activity);
  devices.setIn(tx, key, record, [...counts, ...installs]);
}

/** A device removed from an activation: an uninstall, and no longer active from today. */
export async function deviceRemovedIn(tx: Transaction, db: Firestore, key: DeviceModuleKey, removed: { version: string; today: string }): Promise<void> {
  const devices = deviceActivityStore(db);
  const record = await devices.getIn(tx, key, [key.moduleId]);
  const before = record.modules.get(key.moduleId) ?? null;
  const { activity, counts } = removalCounts(before, removed.today);
  if (activity) record.modules.set(key.moduleId, activity);
  devices.setIn(tx, key, record, [...counts, { moduleId: key.moduleId, day: removed.today, metric: "uninstalls", amount: 1, version: removed.version, platform: before?.platform ?? UNKNOWN }]);
}

/**
 * An update check naming a device (§28): each installed module it names (the caller chose those
 * whose activation holds the device, at a published version) counts the device among its active
 * devices, once a day. The device's record is read first without a transaction: a check that
 * changes nothing (the device was seen today, on the same versions and platform) writes nothing;
 * one that does writes the device's one document, in one transaction that reads it again.
 */
export async function updateCheckSeen(db: Firestore, who: { uid: string; deviceId: string; platform?: string }, installed: { moduleId: string; version: string }[], today: string): Promise<void> {
  const items = [...new Map(installed.map((item) => [item.moduleId, item])).values()];
  if (items.length === 0) return;
  const devices = deviceActivityStore(db);
  const key = { uid: who.uid, deviceId: who.deviceId };
  const unchanged = (before: DeviceActivity | undefined, item: { version: string }) =>
    before?.lastDay === today && before.version === item.version && (who.platform === undefined || before.platform === who.platform);
  const changes = (record: DeviceRecord) => items.filter((item) => !unchanged(record.modules.get(item.moduleId), item));
  if (changes(await devices.get(key)).length === 0) return;
  await withinDeadline(
    "Firestore (analytics)",
    db.runTransaction(async (tx) => {
      const record = await devices.getIn(tx, key, items.map((item) => item.moduleId));
      const changed = changes(record);
      if (changed.length === 0) return;
      const counts: MetricCount[] = [];
      for (const item of changed) {
        const seen = activityCounts(record.modules.get(item.moduleId) ?? null, { moduleId: item.moduleId, version: item.version, platform: who.platform, today });
        record.modules.set(item.moduleId, seen.activity);
        counts.push(...seen.counts);
      }
      devices.setIn(tx, key, record, counts);
    }),
  );
}
