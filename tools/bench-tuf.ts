/**
 * The TUF repository at the contract's scale (§23): 50,000 modules × 10 versions = 500,000
 * targets in the 1,024 bins, built and signed in memory with the service's own builders. Sizes
 * against the clients' limits (tuf-js: snapshot 2 MB, any role 5 MB), the work of one change
 * against §13's 2 s, a full re-sign against the maintenance function's 300 s, and what a client
 * spends parsing the files it needs for one target (tuf-js parses with @tufjs/models).
 */
import { createHash } from "node:crypto";
import { Metadata, MetadataKind } from "@tufjs/models";
import { generateTufKey, parsePrivateKeys, signerOf } from "../functions/src/core/tuf-keys";
import { binMetadata, binTargets, sealed, snapshotMetadata, timestampMetadata } from "../functions/src/tuf/metadata";
import { binNames, binOf, expiryFrom, targetFileOf } from "../functions/src/tuf/rules";

export interface TufRow {
  name: string;
  ratio: number;
  wanted: string;
  ok: boolean | null;
  detail: string;
}

const MODULES = 50_000;
const VERSIONS = 10;
const SNAPSHOT_LIMIT = 2_000_000;
const ROLE_LIMIT = 5_000_000;

const timed = <T>(run: () => T): [T, number] => {
  const started = performance.now();
  const value = run();
  return [value, performance.now() - started];
};

export function tufAtScale(report: (row: TufRow) => void): void {
  const online = signerOf(parsePrivateKeys(generateTufKey())[0]);
  const now = new Date();
  const byBin = new Map(binNames().map((name) => [name, [] as ReturnType<typeof targetFileOf>[]]));
  for (let module = 0; module < MODULES; module += 1) {
    const moduleId = `publisher${module % 5_000}.module-${module}`;
    for (let minor = 0; minor < VERSIONS; minor += 1) {
      const version = `1.${minor}.${module % 7}`;
      const target = targetFileOf({ moduleId, version, publisherId: `publisher${module % 5_000}`, sha256: createHash("sha256").update(`${moduleId}@${version}`).digest("hex"), size: 100_000 + module });
      byBin.get(binOf(target.path))!.push(target);
    }
  }
  const expires = expiryFrom(now, "bins");
  const [bins, signAllMs] = timed(() => [...byBin].map(([name, targets]) => ({ name, json: sealed(binMetadata(2, targets, expires), [online]) })));
  const largest = bins.reduce((a, b) => (a.json.length >= b.json.length ? a : b));
  const versions = Object.fromEntries(bins.map((bin) => [bin.name, 2]));
  const snapshot = sealed(snapshotMetadata(2, { targets: 1, ...versions }, expiryFrom(now, "snapshot")), [online]);
  const timestamp = sealed(timestampMetadata(2, 2, expiryFrom(now, "timestamp")), [online]);
  // One change: read the largest bin, add a target, sign it, a new snapshot and timestamp.
  const [, changeMs] = timed(() => {
    const targets = binTargets(largest.json);
    targets.push(targetFileOf({ moduleId: "publisher1.new", version: "1.0.0", publisherId: "publisher1", sha256: "0".repeat(64), size: 1 }));
    sealed(binMetadata(3, targets, expires), [online]);
    sealed(snapshotMetadata(3, { targets: 1, ...versions }, expiryFrom(now, "snapshot")), [online]);
    sealed(timestampMetadata(3, 3, expiryFrom(now, "timestamp")), [online]);
  });
  const [, parseMs] = timed(() => {
    Metadata.fromJSON(MetadataKind.Snapshot, JSON.parse(snapshot));
    Metadata.fromJSON(MetadataKind.Targets, JSON.parse(largest.json));
  });
  const targetsPerBin = [...byBin.values()].map((targets) => targets.length);
  const kb = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;
  report({ name: "tuf: snapshot at 50,000 × 10 / 2 MB", ratio: snapshot.length / SNAPSHOT_LIMIT, wanted: "< 1", ok: snapshot.length < SNAPSHOT_LIMIT, detail: `${kb(snapshot.length)}, 1,025 entries; timestamp ${timestamp.length} B` });
  report({
    name: "tuf: largest bin / 5 MB",
    ratio: largest.json.length / ROLE_LIMIT,
    wanted: "< 1",
    ok: largest.json.length < ROLE_LIMIT,
    detail: `${kb(largest.json.length)} (${largest.name}); ${Math.min(...targetsPerBin)}–${Math.max(...targetsPerBin)} targets a bin`,
  });
  report({ name: "tuf: one change signed / 2 s", ratio: changeMs / 2_000, wanted: "< 1", ok: changeMs < 2_000, detail: `${changeMs.toFixed(0)} ms: bin read and re-signed, snapshot, timestamp (CPU only)` });
  report({ name: "tuf: every bin re-signed / 300 s", ratio: signAllMs / 300_000, wanted: "< 1", ok: signAllMs < 300_000, detail: `${(signAllMs / 1000).toFixed(1)} s of CPU for 1,024 bins (tuf resign; the sweep's timeout is 300 s)` });
  report({ name: "tuf: client parse, snapshot + largest bin", ratio: parseMs / 1_000, wanted: "figure", ok: null, detail: `${parseMs.toFixed(0)} ms in @tufjs/models (what tuf-js spends per refresh that needs that bin)` });
}
