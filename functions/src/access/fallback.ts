import semver from "semver";

/**
 * Perpetual fallback licences (contract §27), as pure functions of the invoices and versions they
 * read: which date a subscription's paid history earns, and which versions that date keeps.
 */

/** One paid invoice of a module subscription: the period it paid for, and whether it counts toward a fallback. */
export interface InvoicePeriod {
  start: Date;
  end: Date;
  /**
   * False when it does not count (§27 "Edges"), which breaks the run it is in: refunded in full or
   * lost in a dispute (not paid), or billed on a price without the promise. Paid by credit balance
   * or a coupon (nothing charged), it counts. A trial's invoice is never one of these.
   */
  counts: boolean;
}

const DAY_MS = 24 * 3600 * 1000;
/**
 * Stripe's renewal periods abut; a day's slack keeps a run whole across a period boundary moved
 * by a billing-anchor change or a month of another length (Jan 31 → Feb 28).
 */
const SLACK_MS = DAY_MS;

const twelveMonthsAfter = (start: Date) => {
  const end = new Date(start.getTime());
  end.setUTCFullYear(end.getUTCFullYear() + 1);
  return end;
};

/**
 * The date a subscription's paid invoices earn (§27), or null: the latest start of a run of
 * counting, unbroken periods that covers twelve months from that start. A yearly invoice covers its year
 * the moment it is paid; twelve paid months cover theirs once the twelfth is paid. The order the
 * invoices are given in does not matter.
 */
export function fallbackUntilOf(invoices: readonly InvoicePeriod[]): Date | null {
  const paid = invoices.filter((invoice) => invoice.counts && invoice.end.getTime() > invoice.start.getTime()).sort((a, b) => a.start.getTime() - b.start.getTime());
  let best: number | null = null;
  let run: InvoicePeriod[] = [];
  let runEnd = -Infinity;
  const closeRun = () => {
    // The latest start in the run from which the run reaches twelve months.
    for (let index = run.length - 1; index >= 0; index -= 1) {
      const start = run[index].start;
      if (runEnd + SLACK_MS >= twelveMonthsAfter(start).getTime()) {
        if (best === null || start.getTime() > best) best = start.getTime();
        break;
      }
    }
  };
  for (const invoice of paid) {
    if (run.length > 0 && invoice.start.getTime() > runEnd + SLACK_MS) {
      closeRun();
      run = [];
      runEnd = -Infinity;
    }
    run.push(invoice);
    runEnd = Math.max(runEnd, invoice.end.getTime());
  }
  if (run.length > 0) closeRun();
  return best === null ? null : new Date(best);
}

/** The later of two dates (null: none yet): `fallbackUntil` only moves forward. */
export const laterOf = (stored: Date | null, computed: Date | null): Date | null => (stored === null ? computed : computed === null || computed.getTime() <= stored.getTime() ? stored : computed);

/** A published version as fallback reads it (a module's version summary entry). */
export interface FallbackCandidate {
  version: string;
  /** Null on summaries written before publish times were kept: not known to be a fallback version. */
  publishedAt: Date | null;
  yanked: boolean;
  revoked: boolean;
}

export interface FallbackVersions {
  /** Whether a version is one of the fallback versions. */
  allows(version: string): boolean;
  /** The newest fallback version that may be served (neither yanked nor revoked), or null. */
  newest: string | null;
}

const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

/**
 * The fallback versions of `fallbackUntil` (§27): every version published on or before it, plus
 * later releases with the major and minor version of the newest of those (its bug fixes). Stripe's
 * periods start on whole seconds: a version published within the second a period starts counts
 * as published on it.
 */
export function fallbackVersionsOf(versions: readonly FallbackCandidate[], fallbackUntil: Date): FallbackVersions {
  const onOrBefore = (entry: FallbackCandidate) => entry.publishedAt !== null && seconds(entry.publishedAt) <= seconds(fallbackUntil);
  // Revoked versions are never served, but still decide the bug-fix line (§27 "Edges").
  const earned = versions.filter(onOrBefore);
  const line = earned.reduce<string | null>((best, entry) => (best === null || semver.gt(entry.version, best) ? entry.version : best), null);
  const sameLine = (version: string) => line !== null && semver.major(version) === semver.major(line) && semver.minor(version) === semver.minor(line);
  const allowed = new Set(versions.filter((entry) => onOrBefore(entry) || sameLine(entry.version)).map((entry) => entry.version));
  const newest = versions.filter((entry) => allowed.has(entry.version) && !entry.yanked && !entry.revoked).reduce<string | null>((best, entry) => (best === null || semver.gt(entry.version, best) ? entry.version : best), null);
  return { allows: (version) => allowed.has(version), newest };
}
