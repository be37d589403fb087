import { isDeepStrictEqual } from "node:util";
import { createHash } from "node:crypto";
import { moduleNotFound } from "../access/visibility";
import { OPERATORS } from "../core/event-outbox";
import { outboundEvent } from "../core/event-types";
import type { WriteBatch } from "firebase-admin/firestore";
import semver from "semver";
import {
  assertInCredentialScope,
  assertInNamespace,
  assertMayChangeVersion,
  assertOwnsModule,
  assertPolicyAllows,
} from "../access/policy";
import { assertAuthorKeyActive, verifyAuthorSignature } from "../author-keys/service";
import { packageChecks } from "../checks/service";
import { nameIndexStore } from "../checks/name-index-store";
import { auditLog, type Actor, type AuditEvent } from "../core/audit-log";
import type { DeveloperAccount } from "../core/auth";
import { catalogChanges, moduleChange } from "../core/catalog-changes";
import { withinDeadline, withinRequestDeadline } from "../core/deadline";
import { storeThenRecord } from "../core/storage";
import { packagePath } from "../core/storage-paths";
import { isFailedPrecondition, toIso } from "../core/documents";
import { ApiError, unavailable } from "../core/errors";
import type { Deps, OperatorDeps } from "../deps";
import { downloadStore } from "../marketplace/download-store";
import {
  listingOf,
  moduleStore,
  NO_POLICY,
  type ModuleListing,
  type ModuleRecord,
  type PublishPolicy,
  type Review,
  type VersionRecord,
} from "../marketplace/module-store";
import { contentStore } from "../module-pages/content-store";
import { CONTENT_RULES, packageContent, readmePathOf } from "../module-pages/package-content";
import { examineEntries } from "./examination";
import { readManifest, readPackageEntry, type Manifest } from "./package";
import { actingOwner, actingPublisher, type Publisher } from "./publisher";
import { signaturePayload } from "./signature";
import { toModuleView, toVersionView } from "./views";
import { latestOf, summaryOf, withEntry, type VersionSummary } from "../marketplace/versions";

/**
 * The path of a module from package to marketplace: sign (validate, store, sign, record as
 * "signed"), then publish (make that version the module's latest).
 */

/** Rounds of optimistic publishing before contention is answered as 503: each loser re-reads once. */
const PUBLISH_ATTEMPTS = 5;

/**
 * Signs a package: its manifest decides where it goes; then the upload runs while every entry is
 * verified and checked (§5, §14), and the version is recorded only once both are done. A package
 * the checks refuse is deleted again (storeThenRecord), so it leaves nothing behind either way.
 * An author signature (§15), when sent, is checked before anything is stored.
 */
export async function signPackage(deps: Deps, signer: Publisher, bytes: Buffer, authorSignature?: string) {
  const { store, signingKeys, db, clock, logger } = deps;
  const modules = moduleStore(db);
  const manifest = await readManifest(bytes);
  const { id: moduleId, version } = manifest;
  const publisher = await actingPublisher(db, signer, moduleId, { refuseSuspended: true });
  const target = { moduleId, version };
  assertInNamespace(moduleId, publisher.publisherId);
  assertInCredentialScope(moduleId, publisher.credential);
  const mayChange = (module: ModuleRecord | null, record: VersionRecord | null) => {
    assertMayChangeVersion(target, module, record, publisher.id);
    assertPolicyAllows(moduleId, module?.policy ?? NO_POLICY, { credential: publisher.credential, authorSigned: authorSignature !== undefined });
  };
  // Refused early, before anything is stored, what the transaction below would refuse anyway.
  const current = await modules.getModuleAndVersion(moduleId, version);
  mayChange(current.module, current.version);
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  const size = bytes.length;
  const author = authorSignature === undefined ? null : await verifyAuthorSignature(db, publisher.publisherId, authorSignature, { moduleId, version, sha256 });
  const examined = examinePackage(db, bytes, manifest, { moduleId, name: manifest.name, sha256, publisherId: publisher.publisherId, private: publisher.businessId !== undefined });
  // Awaited once the upload is done; until then a refusal must not count as unhandled.
  examined.catch(() => undefined);

  const storagePath = packagePath(moduleId, version, sha256);
  const signedAt = clock();
  // The package is stored only if a version record points at it.
  const stored = storeThenRecord(store, storagePath, {
    store: () => store.write(storagePath, bytes, { contentType: "application/zip", metadata: { moduleId, version, sha256 } }),
    record: async () => {
      const { verdict, content } = await examined;
      const signed: VersionRecord = {
        moduleId,
        version,
        state: "signed",
        sha256,
        size,
        storagePath,
        signature: await signingKeys.sign({
          ...signaturePayload({ moduleId, version, sha256, size, publisherId: publisher.publisherId, provenance: publisher.provenance, authorKeyId: author?.authorKeyId ?? null }, signedAt),
        }),
        keyId: signingKeys.keyId,
        signedAt,
        publishedAt: null,
        minAppVersion: manifest.minAppVersion ?? null,
        maxAppVersion: manifest.maxAppVersion ?? null,
        yankedAt: null,
        yankReason: null,
        listing: listingOf({ ...manifest, links: { homepage: manifest.homepage, repository: manifest.repository, issues: manifest.issues, license: manifest.license } }),
        review: { state: verdict.state, findings: verdict.findings },
        revocation: null,
        provenance: publisher.provenance,
        authorSignature: authorSignature ?? null,
        authorKeyId: author?.authorKeyId ?? null,
        hasIcon: content.icon !== null,
      };
      return withinDeadline("Firestore (sign)", db.runTransaction(async (tx) => {
        const { module, version: previous } = await modules.getModuleAndVersion(moduleId, version, tx);
        mayChange(module, previous);
        if (author) await assertAuthorKeyActive(db, tx, author.authorKeyId);
        if (!module) modules.createModule(tx, newModule(moduleId, publisher, signed.listing, signedAt));
        // Until a first publish, the module shows the listing of its latest signed version.
        else if (!module.listed) modules.setModule(tx, { ...withListing(module, signed.listing), updatedAt: signedAt });
        // A revocation stays with the version whatever is signed under its number again.
        modules.setVersion(tx, { ...signed, revocation: previous?.revocation ?? null });
        contentStore(db).write(tx, moduleId, version, content);
        const details = { sha256, size, review: verdict, ...(author ? { authorKeyId: author.authorKeyId } : {}), ...(publisher.provenance ? { provenance: publisher.provenance } : {}) };
        const owners = [{ kind: "publisher" as const, id: publisher.publisherId }];
        const path = `/developers/modules`;
        const emits = [outboundEvent("module.version.signed", owners, { moduleId, version, sha256, review: verdict.state, path })];
        if (verdict.state === "quarantined") {
          const findings = verdict.findings.map((finding) => (finding.similarTo ? `similar_name: ${finding.similarTo}` : finding.check));
          emits.push(outboundEvent("module.version.quarantined", [...owners, OPERATORS], { moduleId, version, findings, path }));
        }
        const answer = signedVersionView(signed, verdict);
        auditLog(db).record(tx, publisher.actor, { action: "module.sign", target: `${moduleId}@${version}`, details, emits, answer }, signedAt);
        return { replacedPath: previous?.storagePath, answer };
      }));
    },
    recordedAnyway: async () => (await modules.getVersion(moduleId, version))?.storagePath === storagePath,
  });
  // When the upload fails, the examination beside it is waited for too (up to the request's end):
  // no work of a sign, whose memory MAX_CONCURRENT_SIGNS counts, goes on after its answer.
  const { replacedPath, answer } = await stored.catch(async (error: unknown) => {
    await withinRequestDeadline("The package's examination", examined).catch(() => undefined);
    throw error;
  });
  if (replacedPath && replacedPath !== storagePath) {
    await store.delete(replacedPath).catch((error: Error) =>
      logger.warn("could not delete a replaced package", { storagePath: replacedPath, error: error.message }),
    );
  }
  return answer;
}

/** What a sign answers: the signed version, its signature and its review. */
const signedVersionView = (signed: VersionRecord, verdict: VersionRecord["review"]) => ({
  moduleId: signed.moduleId,
  version: signed.version,
  sha256: signed.sha256,
  size: signed.size,
  signature: signed.signature,
  keyId: signed.keyId,
  signedAt: toIso(signed.signedAt),
  state: "signed" as const,
  review: verdict,
  provenance: signed.provenance,
  authorKeyId: signed.authorKeyId,
});

/**
 * Every entry verified and checked, then the checks' verdict (or their refusal), with what the
 * module's page shows from the package (§16), read in the same pass.
 */
async function examinePackage(db: Deps["db"], bytes: Buffer, manifest: Manifest, pkg: { moduleId: string; name: string; sha256: string; publisherId: string; private: boolean }) {
  const checks = packageChecks(db, pkg);
  const paths = { readme: manifest.readme, changelog: manifest.changelog, icon: manifest.icon };
  // The README is read first: the images it shows are kept from the one pass over the entries.
  const readme = await readPackageEntry(bytes, readmePathOf(paths), CONTENT_RULES.maxMarkdownBytes);
  const content = packageContent(paths, readme);
  const examined = await examineEntries(bytes, content.paths);
  for (const entry of examined.entries) content.visit(entry);
  return { verdict: await checks.verdict(examined), content: content.result() };
}

/**
 * Publishes a signed version: the version must exist, belong to the caller, not be published
 * yet, and be semver-greater than every version published so far (changeVersion: of concurrent
 * publishes of one version exactly one succeeds, the others see it published).
 */
export async function publishVersion({ db, clock, config }: Deps, publisher: Publisher, moduleId: string, version: string) {
  // Read before the change, so that its answer commits with it (§1): publishing downloads nothing.
  const downloads = await downloadStore(db, config.downloadShards).total(moduleId);
  const now = clock();
  return changeVersion(db, publisher, moduleId, version, now, { refuseSuspended: true }, (module, signed, acting) => {
    assertMayChangeVersion({ moduleId, version }, module, signed, acting.id);
    assertReviewed(moduleId, signed);
    if (module.highestPublishedVersion && !semver.gt(version, module.highestPublishedVersion)) {
      throw new ApiError("version_not_newer", `${version} is not greater than ${module.highestPublishedVersion}, the highest version published so far.`);
    }
    const published: VersionRecord = { ...signed, state: "published", publishedAt: now };
    const summary = withEntry(module.versionSummary, summaryOf(published));
    const named = module.highestPublishedVersion === null || module.name !== signed.listing.name;
    const changed: ModuleRecord = { ...withListing(module, signed.listing), ...latestOf(summary, module.revocation), highestPublishedVersion: version, updatedAt: now };
    return {
      version: published,
      module: changed,
      audit: {
        action: "module.publish",
        target: `${moduleId}@${version}`,
        details: { sha256: signed.sha256 },
        emits: [outboundEvent("module.version.published", [{ kind: "publisher", id: module.publisherId }], { moduleId, version, sha256: signed.sha256, path: `/modules/${moduleId}` })],
        answer: { module: toModuleView(changed, downloads), version: toVersionView(published) },
      },
      // A first publish, or one under a new name, files the name against look-alikes of other
      // publishers; a private module's name is nobody else's business (§26).
      alsoWrite: named && !module.businessId ? (batch) => nameIndexStore(db).add(batch, { moduleId, publisherId: module.publisherId, name: signed.listing.name }) : undefined,
    };
  });
}

/**
 * Withdraws a published version (or puts it back): it is never chosen as the latest or a
 * compatible version while yanked, the module's latest moves to the highest version not yanked,
 * and a module with none leaves the listing. An explicit download of the version still works.
 */
export async function setYanked({ db, clock }: Deps, publisher: Publisher, moduleId: string, version: string, yank: { reason?: string } | null) {
  const now = clock();
  return changeVersion(db, publisher, moduleId, version, now, {}, (module, current) => {
    if (current.state !== "published") throw new ApiError("version_not_found", `${moduleId}@${version} is not published.`);
    const changed: VersionRecord = { ...current, yankedAt: yank ? (current.yankedAt ?? now) : null, yankReason: yank ? (yank.reason ?? current.yankReason) : null };
    const summary = withEntry(module.versionSummary, summaryOf(changed));
    return {
      version: changed,
      module: { ...module, ...latestOf(summary, module.revocation) },
      audit: {
        action: yank ? "module.yank" : "module.unyank",
        target: `${moduleId}@${version}`,
        details: yank?.reason ? { reason: yank.reason } : {},
        emits: [outboundEvent("module.version.yanked", [{ kind: "publisher", id: module.publisherId }], { moduleId, version, yanked: yank !== null, reason: changed.yankReason, path: `/modules/${moduleId}` })],
        answer: { moduleId, version, yankedAt: changed.yankedAt ? toIso(changed.yankedAt) : null },
      },
    };
  });
}

interface VersionChange<Answer> {
  module: ModuleRecord;
  version: VersionRecord;
  /** The entry, with the change's answer (committed with the request's Idempotency-Key, §1). */
  audit: AuditEvent & { answer: Answer };
  /** Other writes that belong to the change, in the same batch. */
  alsoWrite?: (batch: WriteBatch) => void;
}

/**
 * Changes a version and its module together, optimistically, without a transaction: both are
 * written in one batch on the condition that neither changed since they were read. Of concurrent
 * changes of one version exactly one batch commits; the others fail their precondition, read
 * again and decide again (a second publish then sees the version published: 409). No locks are
 * held, so a burst of callers ends in a round or two, not in lock timeouts.
 */
async function changeVersion<Answer>(
  db: Deps["db"],
  signer: Publisher,
  moduleId: string,
  version: string,
  at: Date,
  acting: { refuseSuspended?: boolean },
  change: (module: ModuleRecord, record: VersionRecord, publisher: Publisher) => VersionChange<Answer>,
): Promise<Answer> {
  const modules = moduleStore(db);
  const publisher = await actingPublisher(db, signer, moduleId, acting);
  const changes = catalogChanges(db);
  assertInCredentialScope(moduleId, publisher.credential);
  for (let attempt = 1; attempt <= PUBLISH_ATTEMPTS; attempt += 1) {
    const current = await modules.getModuleAndVersion(moduleId, version);
    if (current.module) {
      assertOwnsModule(moduleId, current.module, publisher.id);
      // Read with the module the batch is conditional on: a policy set meanwhile fails the batch, which then decides again.
      assertPolicyAllows(moduleId, current.module.policy, { credential: publisher.credential });
    }
    if (!current.module) throw moduleNotFound(moduleId);
    if (!current.version) throw new ApiError("version_not_found", `${moduleId}@${version} was never signed.`);
    const changed = change(current.module, current.version, publisher);
    const batch = db.batch();
    modules.setVersion(batch, changed.version, { lastUpdateTime: current.versionSnapshot.updateTime! });
    modules.setModule(batch, changed.module, { lastUpdateTime: current.moduleSnapshot.updateTime! });
    changes.record(batch, moduleChange(moduleId));
    auditLog(db).record(batch, publisher.actor, changed.audit, at);
    changed.alsoWrite?.(batch);
    try {
      await withinDeadline("Firestore (publish)", batch.commit());
      changes.applied(moduleChange(moduleId));
      return changed.audit.answer;
    } catch (error) {
      if (!isFailedPrecondition(error)) throw error;
    }
  }
  throw unavailable(`${moduleId} is being changed by other requests; retry.`, 1);
}

/**
 * Operators: recomputes every module's version summary, latest and highest published version from
 * its versions (for modules published before the summary existed), and files published public
 * modules' names in the look-alike index (for modules published before the package checks). Idempotent:
 * `rebuilt` names the modules it changed.
 */
export async function rebuildVersionSummaries({ db }: Pick<OperatorDeps, "db">) {
  const modules = moduleStore(db);
  const rebuilt: string[] = [];
  for (const module of await modules.all()) {
    const published = (await modules.versions(module.id)).filter((record) => record.state === "published");
    const summary = published.reduce<VersionSummary[]>((entries, record) => withEntry(entries, summaryOf(record)), []);
    const highest = published.reduce<string | null>((best, record) => (!best || semver.gt(record.version, best) ? record.version : best), null);
    const rebuiltModule = { ...module, ...latestOf(summary, module.revocation), highestPublishedVersion: highest };
    // A module already whole is not written again: no change reaches the instances' caches.
    const changed = !isDeepStrictEqual(rebuiltModule, module);
    // A business's private module (§26) is never filed against look-alikes of public ones.
    const filed = highest !== null && module.businessId === null;
    if (!changed && !filed) continue;
    const batch = db.batch();
    if (changed) {
      modules.setModule(batch, rebuiltModule);
      catalogChanges(db).record(batch, moduleChange(module.id));
    }
    if (filed) nameIndexStore(db).add(batch, { moduleId: module.id, publisherId: module.publisherId, name: module.name });
    await batch.commit();
    if (changed) rebuilt.push(module.id);
  }
  return { rebuilt };
}

/** A quarantined or rejected version waits for (or failed) an operator's review. */
function assertReviewed(moduleId: string, record: VersionRecord): void {
  const { state, reason } = record.review;
  if (state === "quarantined") {
    throw new ApiError("under_review", `${moduleId}@${record.version} is quarantined until an operator reviews it: its name resembles ${similarTo(record.review)}.`);
  }
  if (state === "rejected") {
    throw new ApiError("under_review", `${moduleId}@${record.version} was rejected in review${reason ? `: ${reason}` : ""}. Sign a new package to try again.`);
  }
}

const similarTo = (review: Review) =>
  review.findings.flatMap((finding) => (finding.similarTo ? [`'${finding.similarTo}'`] : [])).join(", ") || "another publisher's module";

/** A module's fields with a new listing: the listing fields it drops are gone. */
function withListing(module: ModuleRecord, listing: ModuleListing): ModuleRecord {
  const { name: _name, summary: _summary, description: _description, category: _category, tags: _tags, entitlement: _entitlement, links: _links, ...rest } = module;
  return { ...rest, ...listingOf(listing) };
}

function newModule(moduleId: string, publisher: Publisher, listing: ModuleListing, now: Date): ModuleRecord {
  return {
    id: moduleId,
    ...listingOf(listing),
    publisherId: publisher.publisherId,
    developerId: publisher.id,
    businessId: publisher.businessId ?? null,
    latestVersion: null,
    createdAt: now,
    price: null,
    stripeProductId: null,
    restriction: null,
    updatedAt: now,
    listed: false,
    versionSummary: [],
    highestPublishedVersion: null,
    revocation: null,
    policy: NO_POLICY,
  };
}

/**
 * Sets a module's publish policy (§15), in a transaction with its audit entry. The module's update
 * time moves, so a publish, yank or unyank decided on the old policy fails its condition and
 * decides again on the new one.
 */
export async function setPublishPolicy({ db, clock }: Deps, developer: DeveloperAccount, actor: Actor, moduleId: string, policy: PublishPolicy) {
  const modules = moduleStore(db);
  const now = clock();
  const owner = await actingOwner(db, developer, moduleId);
  await withinDeadline(
    "Firestore (policy)",
    db.runTransaction(async (tx) => {
      const module = modules.readModule(await tx.get(modules.moduleRef(moduleId)));
      if (!module) throw moduleNotFound(moduleId);
      assertOwnsModule(moduleId, module, owner.id);
      modules.setPolicy(tx, moduleId, policy);
      auditLog(db).record(tx, actor, { action: "module.policy", target: moduleId, details: { before: module.policy, after: policy } }, now);
    }),
  );
  return { moduleId, ...policy };
}
