import type { Firestore } from "firebase-admin/firestore";
import { ApiError } from "../core/errors";
import type { PackageFinding } from "../core/findings";
import { blocklistStore } from "./blocklist-store";
import { nameIndexStore } from "./name-index-store";
import { areAlike, foldedNamesOf, indexKeysOf } from "./names";
import type { SecretFinding } from "./secrets";

/** One entry of a package: its name, SHA-256, and its bytes when it is small enough to scan (MAX_SCANNED_ENTRY_BYTES). */
export interface PackageEntryContent {
  name: string;
  sha256: string;
  bytes: Buffer | null;
}

/**
 * The package checks of contract §14, run in the sign request after the package's format is
 * checked (§5) and before anything is stored: secrets in text entries and blocklisted files refuse
 * the package (422 package_rejected, nothing stored); a name like another publisher's module
 * quarantines it (signed and stored, not publishable until an operator approves it).
 */

/** A refusal lists at most this many findings (the count says how many there were). */
const MAX_LISTED_FINDINGS = 100;

export interface ReviewVerdict {
  state: "passed" | "quarantined";
  findings: PackageFinding[];
}

/**
 * The checks of one package. What needs only the package's names (look-alikes of other modules)
 * is looked up at once, while the entries are still being read; the verdict then waits for the
 * entries' hashes and secret findings. A business's private module (§26) is not held to the
 * look-alike check, which protects the public marketplace's users; the rest applies.
 */
export function packageChecks(db: Firestore, pkg: { moduleId: string; name: string; sha256: string; publisherId: string; private: boolean }) {
  const similar = pkg.private ? Promise.resolve([]) : similarModules(db, pkg);
  // A package refused before its verdict leaves this unawaited: not an unhandled rejection.
  similar.catch(() => undefined);
  return {
    /** Refuses the package, or says whether it passes or waits for review. */
    async verdict({ entries, secrets }: { entries: { name: string; sha256: string }[]; secrets: SecretFinding[] }): Promise<ReviewVerdict> {
      const blocked = await blocklistStore(db).find([pkg.sha256, ...entries.map((entry) => entry.sha256)]);
      const blockedHashes = new Set(blocked.map((record) => record.sha256));
      const refusals: PackageFinding[] = [
        ...secrets,
        ...(blockedHashes.has(pkg.sha256) ? [{ check: "blocklist" as const, rule: "blocklist", path: null, sha256: pkg.sha256 }] : []),
        ...entries
          .filter((entry) => blockedHashes.has(entry.sha256))
          .map((entry) => ({ check: "blocklist" as const, rule: "blocklist", path: entry.name, sha256: entry.sha256 })),
      ];
      if (refusals.length > 0) {
        const listed = refusals.slice(0, MAX_LISTED_FINDINGS);
        const more = refusals.length > listed.length ? ` (the first ${listed.length} of ${refusals.length} are listed)` : "";
        throw new ApiError(
          "package_rejected",
          `The package was refused: ${describe(refusals)}${more}. Remove them, then sign again; nothing was stored.`,
          { extensions: { findings: listed } },
        );
      }
      const alike = await similar;
      return alike.length > 0
        ? { state: "quarantined", findings: alike.map((moduleId) => ({ check: "similar_name", similarTo: moduleId })) }
        : { state: "passed", findings: [] };
    },
  };
}

function describe(findings: PackageFinding[]): string {
  const secretCount = findings.filter((finding) => finding.check === "secret").length;
  const blockedCount = findings.length - secretCount;
  return [
    secretCount ? `${secretCount} secret${secretCount > 1 ? "s" : ""} found` : "",
    blockedCount ? `${blockedCount} blocklisted file${blockedCount > 1 ? "s" : ""}` : "",
  ]
    .filter(Boolean)
    .join(" and ");
}

/** Published modules of other publishers whose names this package's names resemble, by id. */
async function similarModules(db: Firestore, pkg: { moduleId: string; name: string; publisherId: string }): Promise<string[]> {
  const folded = foldedNamesOf(pkg.moduleId, pkg.name);
  const candidates = await nameIndexStore(db).candidates(folded.flatMap(indexKeysOf));
  const alike = candidates.filter(
    (candidate) => candidate.publisherId !== pkg.publisherId && candidate.moduleId !== pkg.moduleId && folded.some((name) => areAlike(name, candidate.folded)),
  );
  return [...new Set(alike.map((candidate) => candidate.moduleId))].sort();
}
