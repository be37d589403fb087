import type { MetricCount } from "./metric-store";
import type { DeviceActivity } from "./device-activity-store";
import { newlyActiveDays, remainingActiveDays, UNKNOWN } from "./rules";

/**
 * What a device's activity counts (§28), as `MetricCount`s for `metricCounts.addIn`: the pure
 * half; the callers read the device's last activity in their own transaction and write both.
 */

export interface DeviceSeen {
  moduleId: string;
  version: string;
  /** What the app reported; absent: what it reported before, else unknown. */
  platform: string | undefined;
  today: string;
}

/**
 * A device confirmed or checked for updates: the days its window did not cover yet count it among
 * the active devices, under the version and platform it reports now; the days its window already
 * covered from today on move to them when they changed. The activity to keep, with the counts.
 */
export function activityCounts(before: DeviceActivity | null, seen: DeviceSeen): { activity: DeviceActivity; counts: MetricCount[] } {
  const { moduleId, version, today } = seen;
  const platform = seen.platform ?? before?.platform ?? UNKNOWN;
  const counts: MetricCount[] = newlyActiveDays(before?.lastDay ?? null, today).map((day) => ({ moduleId, day, metric: "activeDevices", amount: 1, version, platform }));
  if (before?.lastDay) {
    for (const day of remainingActiveDays(before.lastDay, today)) {
      if (before.version !== version) counts.push(...moved(moduleId, day, { version: before.version }, { version }));
      if (before.platform !== platform) counts.push(...moved(moduleId, day, { platform: before.platform }, { platform }));
    }
  }
  return { activity: { moduleId, lastDay: today, version, platform }, counts };
}

/** A device removed (§10): it stops counting as active from today. The activity to keep, with the counts. */
export function removalCounts(before: DeviceActivity | null, today: string): { activity: DeviceActivity | null; counts: MetricCount[] } {
  if (!before?.lastDay) return { activity: before, counts: [] };
  const { moduleId, version, platform } = before;
  return {
    activity: { ...before, lastDay: null },
    counts: remainingActiveDays(before.lastDay, today).map((day) => ({ moduleId, day, metric: "activeDevices", amount: -1, version, platform })),
  };
}

const moved = (moduleId: string, day: string, from: { version?: string; platform?: string }, to: { version?: string; platform?: string }): MetricCount[] => [
  { moduleId, day, metric: "activeDevices", amount: -1, ...from, onlySplits: true },
  { moduleId, day, metric: "activeDevices", amount: 1, ...to, onlySplits: true },
];
