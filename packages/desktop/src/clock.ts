import { DesktopError } from "./errors";
import type { DataDirectory } from "./data-dir";

/** How far the clock may stand behind the newest time seen: the service's and this device's clocks differ a little. */
export const CLOCK_TOLERANCE_MS = 5 * 60 * 1000;
/** The newest time is written down at most this often (it only guards against going back by more than the tolerance). */
const PERSIST_EVERY_MS = 60 * 1000;

/**
 * The clock-rollback guard: the newest trusted time the SDK has seen (its own clock at each
 * call, and the signed times of certificates and revocation lists), kept in dataDir. A clock
 * moved back further than the tolerance is refused (`clock_rollback`), so that moving the clock
 * back does not bring an expired certificate back to life.
 */
export function clockGuard(dir: DataDirectory, clock: () => Date) {
  const file = dir.at("clock.json");
  let newest = dir.readJson<{ newest: number }>(file)?.newest ?? 0;
  let persisted = newest;
  const saw = (at: number) => {
    if (at <= newest) return;
    newest = at;
    if (newest - persisted >= PERSIST_EVERY_MS) {
      dir.writeAtomically(file, JSON.stringify({ newest }));
      persisted = newest;
    }
  };
  return {
    /** A signed time (a certificate's or a list's `iat`, in seconds) was seen. */
    sawSigned(iatSeconds: number) {
      if (Number.isFinite(iatSeconds)) saw(iatSeconds * 1000);
    },
    /** Now, unless the clock went back: then `clock_rollback`. */
    now(): Date {
      const now = clock();
      if (now.getTime() < newest - CLOCK_TOLERANCE_MS) {
        throw new DesktopError("clock_rollback", `The system clock (${now.toISOString()}) is behind a time this app has already seen (${new Date(newest).toISOString()}); set the clock right.`);
      }
      saw(now.getTime());
      return now;
    },
  };
}

export type ClockGuard = ReturnType<typeof clockGuard>;
