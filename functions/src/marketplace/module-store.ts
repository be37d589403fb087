import {
  FieldValue,
  Timestamp,
  type DocumentReference,
  type DocumentSnapshot,
  type Firestore,
  type Transaction,
  type WriteBatch,
} from "firebase-admin/firestore";
import { z } from "zod";
import { withDeadlines } from "../core/deadline";
import { ACTOR_KINDS, type Actor } from "../core/audit-log";
import { documentAt, readDocument, timestamp, writeReadAsMissing, oncePerDatabase } from "../core/documents";
import { packageFindingSchema, type PackageFinding } from "../core/findings";
import { provenanceSchema, type Provenance } from "../core/provenance";
import type { VersionSummary } from "./versions";

/** A version is signed first, then published. */
export const VERSION_STATES = ["signed", "published"] as const;

/**
 * The package checks' verdict on a version (contract §14): passed, or quarantined until an
 * operator approves it (then publishable) or rejects it (its package deleted).
 */
export const REVIEW_STATES = ["passed", "quarantined", "approved", "rejected"] as const;

/**
 * `modules/{moduleId}` and `modules/{moduleId}/versions/{version}`: modules and their signed and
 * published versions, written by the service's sign and publish flow.
 */

/** The listing fields of a module, as its package's manifest gives them. */
const moduleListing = z.object({
  name: z.string(),
  summary: z.string(),
  description: z.string().optional(),
  category: z.string().optional(),
  tags: z.array(z.string()).optional(),
  entitlement: z.string().optional(),
  /** The manifest's resources (§24): web addresses, and a licence name. */
  links: z.object({ homepage: z.string().optional(), repository: z.string().optional(), issues: z.string().optional(), license: z.string().optional() }).optional(),
});

const revocationFields = z.object({ reason: z.string(), revokedAt: timestamp });

const decidedBy = z.object({ kind: z.enum(ACTOR_KINDS), id: z.string() });

const reviewFields = z.object({
  state: z.enum(REVIEW_STATES),
  findings: z.array(packageFindingSchema),
  reason: z.string().optional(),
  note: z.string().optional(),
  decidedAt: timestamp.optional(),
  decidedBy: decidedBy.optional(),
});

const summaryEntry = z.object({
  version: z.string(),
  minAppVersion: z.string().nullable(),
  maxAppVersion: z.string().nullable(),
  yanked: z.boolean(),
  revoked: z.boolean().optional(),
  publishedAt: timestamp.optional(),
  hasIcon: z.boolean().optional(),
});

/** The price of a module for sale (contract §20), and the Stripe price that charges it. */
const modulePriceFields = z.object({
  model: z.enum(["one_time", "subscription"]),
  amount: z.number().int().positive(),
  currency: z.string(),
  interval: z.enum(["month", "year"]).nullable(),
  trialDays: z.number().int().nonnegative(),
  perSeat: z.boolean(),
  /** Missing on prices set before §27: none. */
  fallback: z.enum(["none", "perpetual"]).default("none"),
  stripePriceId: z.string(),
  updatedAt: timestamp,
});

const moduleDocument = moduleListing.extend({
  publisherId: z.string(),
  developerId: z.string(),
  /** Null until a first version is published. */
  latestVersion: z.string().nullable(),
  createdAt: timestamp,
  updatedAt: timestamp,
  /** Written by earlier versions of the service; downloads are counted in download-store.ts now. */
  downloads: z.number().int().nonnegative().optional(),
  /** Whether the module is in the marketplace (it has a published version). */
  listed: z.boolean(),
  /** The published versions, highest first, at most MAX_SUMMARISED_VERSIONS (versions.ts); absent on modules from before it. */
  versions: z.array(summaryEntry).optional(),
  /** The highest version ever published, yanked or not: a new one must be greater. */
  highestPublishedVersion: z.string().nullable().optional(),
  /** Every version, published or not yet, is revoked (an operator's `module revoke` without --version). */
  revocation: revocationFields.optional(),
  /** The owner's publish policy (contract §15); absent: nothing required. */
  policy: z.object({ requireTrustedPublishing: z.boolean(), requireAuthorSignature: z.boolean() }).optional(),
  /** Its price while the owner sells it (§20); absent: free. */
  price: modulePriceFields.optional(),
  /** The Stripe Product its prices belong to, once it was first priced. */
  stripeProductId: z.string().optional(),
  /** The business it is private to (§26: its publisher is the business's own); absent: public. */
  businessId: z.string().optional(),
  /** Out of listings, search and suggestions by a moderation decision (§30), its page kept; absent: not restricted. */
  restriction: z.object({ decisionId: z.string(), at: timestamp }).optional(),
});

const versionDocument = z.object({
  state: z.enum(VERSION_STATES),
  sha256: z.string(),
  size: z.number().int().nonnegative(),
  storagePath: z.string(),
  signature: z.string(),
  keyId: z.string(),
  signedAt: timestamp,
  publishedAt: timestamp.optional(),
  minAppVersion: z.string().optional(),
  maxAppVersion: z.string().optional(),
  yankedAt: timestamp.optional(),
  yankReason: z.string().optional(),
  /** The manifest's listing fields, copied to the module when this version is published. */
  listing: moduleListing,
  /** Absent on versions signed before the package checks: they passed. */
  review: reviewFields.optional(),
  revocation: revocationFields.optional(),
  /** The CI run that signed it, when it was signed with an OIDC publish token. */
  provenance: provenanceSchema.optional(),
  /** The author's own JWS over { moduleId, version, sha256 }, and the id of their key that made it. */
  authorSignature: z.string().optional(),
  authorKeyId: z.string().optional(),
  /** Its package carries an icon, kept in the version's `content` (module-pages/content-store.ts). */
  hasIcon: z.boolean().optional(),
});

export type ModuleListing = z.output<typeof moduleListing>;

export interface ModuleRecord extends ModuleListing {
  id: string;
  publisherId: string;
  developerId: string;
  latestVersion: string | null;
  createdAt: Date;
  updatedAt: Date;
  listed: boolean;
  versionSummary: VersionSummary[];
  highestPublishedVersion: string | null;
  revocation: Revocation | null;
  policy: PublishPolicy;
  price: ModulePrice | null;
  stripeProductId: string | null;
  /** The business whose members alone may see it (§26), or null: public. */
  businessId: string | null;
  /** A moderation decision's restriction of its visibility (§30), or null. */
  restriction: { decisionId: string; at: Date } | null;
}

export interface ModulePrice {
  model: "one_time" | "subscription";
  /** In the currency's minor unit. */
  amount: number;
  currency: string;
  interval: "month" | "year" | null;
  trialDays: number;
  perSeat: boolean;
  /** What a subscription promises after it ends (§27). */
  fallback: "none" | "perpetual";
  stripePriceId: string;
  updatedAt: Date;
}

/** What the owner requires of every sign, publish, yank and unyank of a module (contract §15). */
export interface PublishPolicy {
  requireTrustedPublishing: boolean;
  requireAuthorSignature: boolean;
}

export const NO_POLICY: PublishPolicy = { requireTrustedPublishing: false, requireAuthorSignature: false };

export interface Revocation {
  reason: string;
  revokedAt: Date;
}

export interface Review {
  state: (typeof REVIEW_STATES)[number];
  findings: PackageFinding[];
  reason?: string;
  note?: string;
  decidedAt?: Date;
  decidedBy?: { kind: Actor["kind"]; id: string };
}

export interface VersionRecord {
  moduleId: string;
  version: string;
  state: (typeof VERSION_STATES)[number];
  sha256: string;
  size: number;
  storagePath: string;
  signature: string;
  keyId: string;
  signedAt: Date;
  publishedAt: Date | null;
  minAppVersion: string | null;
  maxAppVersion: string | null;
  yankedAt: Date | null;
  yankReason: string | null;
  listing: ModuleListing;
  review: Review;
  revocation: Revocation | null;
  provenance: Provenance | null;
  authorSignature: string | null;
  authorKeyId: string | null;
  hasIcon: boolean;
}

/** Only the listing fields a manifest has: a field it drops is dropped from the module too. */
export function listingOf(source: ModuleListing): ModuleListing {
  const { name, summary, description, category, tags, entitlement, links } = source;
  const givenLinks = links && Object.fromEntries(Object.entries(links).filter(([, value]) => value !== undefined));
  return {
    name,
    summary,
    ...(description !== undefined ? { description } : {}),
    ...(category !== undefined ? { category } : {}),
    ...(tags !== undefined && tags.length > 0 ? { tags } : {}),
    ...(entitlement !== undefined ? { entitlement } : {}),
    ...(givenLinks && Object.keys(givenLinks).length > 0 ? { links: givenLinks } : {}),
  };
}

interface Precondition {
  lastUpdateTime: Timestamp;
}

/**
 * set() semantics (fields the data lacks are gone) also for a conditional write, which Firestore
 * only offers as update(): the optional fields the data lacks are deleted explicitly.
 */
function writeWhole(
  writer: Transaction | WriteBatch,
  ref: DocumentReference,
  data: Record<string, unknown>,
  optionalFields: string[],
  precondition: Precondition | undefined,
): void {
  if (!precondition) {
    (writer as WriteBatch).set(ref, data);
    return;
  }
  const deletions = Object.fromEntries(optionalFields.filter((field) => !(field in data)).map((field) => [field, FieldValue.delete()]));
  (writer as WriteBatch).update(ref, { ...data, ...deletions }, precondition);
}

const readRevocation = (stored: z.output<typeof revocationFields> | undefined): Revocation | null =>
  stored ? { reason: stored.reason, revokedAt: stored.revokedAt.toDate() } : null;

export const moduleStore = oncePerDatabase((db: Firestore) => {
  const modules = db.collection("modules");
  const moduleRef = (moduleId: string) => documentAt(modules, moduleId);
  const versionRef = (moduleId: string, version: string) => documentAt(moduleRef(moduleId).collection("versions"), version);

  const readModule = (snapshot: DocumentSnapshot): ModuleRecord | null => {
    const stored = readDocument(moduleDocument, snapshot);
    if (!stored) return null;
    const { downloads: _legacy, createdAt, updatedAt, versions, highestPublishedVersion, revocation, policy, price, stripeProductId, businessId, restriction, ...fields } = stored;
    return {
      id: snapshot.id,
      ...fields,
      createdAt: createdAt.toDate(),
      updatedAt: updatedAt.toDate(),
      versionSummary: (versions ?? (fields.latestVersion ? [{ version: fields.latestVersion, minAppVersion: null, maxAppVersion: null, yanked: false }] : [])).map(
        ({ publishedAt, ...entry }: z.output<typeof summaryEntry>) => ({
          ...entry,
          revoked: entry.revoked ?? false,
          publishedAt: publishedAt?.toDate() ?? null,
          hasIcon: entry.hasIcon ?? false,
        }),
      ),
      highestPublishedVersion: highestPublishedVersion ?? fields.latestVersion,
      revocation: readRevocation(revocation),
      policy: policy ?? NO_POLICY,
      price: price ? { ...price, updatedAt: price.updatedAt.toDate() } : null,
      stripeProductId: stripeProductId ?? null,
      businessId: businessId ?? null,
      restriction: restriction ? { decisionId: restriction.decisionId, at: restriction.at.toDate() } : null,
    };
  };
  const readVersion = (snapshot: DocumentSnapshot): VersionRecord | null => {
    const stored = readDocument(versionDocument, snapshot);
    return (
      stored && {
        moduleId: snapshot.ref.parent.parent!.id,
        version: snapshot.id,
        ...stored,
        signedAt: stored.signedAt.toDate(),
        publishedAt: stored.publishedAt?.toDate() ?? null,
        minAppVersion: stored.minAppVersion ?? null,
        maxAppVersion: stored.maxAppVersion ?? null,
        yankedAt: stored.yankedAt?.toDate() ?? null,
        yankReason: stored.yankReason ?? null,
        review: stored.review
          ? { ...stored.review, decidedAt: stored.review.decidedAt?.toDate() }
          : { state: "passed" as const, findings: [] },
        revocation: readRevocation(stored.revocation),
        provenance: stored.provenance ?? null,
        authorSignature: stored.authorSignature ?? null,
        authorKeyId: stored.authorKeyId ?? null,
        hasIcon: stored.hasIcon ?? false,
      }
    );
  };
  const revocationData = (revocation: Revocation) => ({ reason: revocation.reason, revokedAt: Timestamp.fromDate(revocation.revokedAt) });
  // Findings are plain JSON (no undefined members, which Firestore refuses).
  const reviewData = ({ decidedAt, ...review }: Review) => ({
    ...(JSON.parse(JSON.stringify(review)) as Record<string, unknown>),
    ...(decidedAt ? { decidedAt: Timestamp.fromDate(decidedAt) } : {}),
  });
  const moduleData = (module: ModuleRecord) => ({
    ...listingOf(module),
    publisherId: module.publisherId,
    developerId: module.developerId,
    latestVersion: module.latestVersion,
    createdAt: Timestamp.fromDate(module.createdAt),
    updatedAt: Timestamp.fromDate(module.updatedAt),
    listed: module.listed,
    versions: module.versionSummary.map(({ publishedAt, ...entry }) => ({ ...entry, ...(publishedAt ? { publishedAt: Timestamp.fromDate(publishedAt) } : {}) })),
    highestPublishedVersion: module.highestPublishedVersion,
    ...(module.revocation ? { revocation: revocationData(module.revocation) } : {}),
    policy: { ...module.policy },
    ...(module.price ? { price: priceData(module.price) } : {}),
    ...(module.stripeProductId ? { stripeProductId: module.stripeProductId } : {}),
    ...(module.businessId ? { businessId: module.businessId } : {}),
    ...(module.restriction ? { restriction: { decisionId: module.restriction.decisionId, at: Timestamp.fromDate(module.restriction.at) } } : {}),
  });
  const priceData = (price: ModulePrice) => ({ ...price, updatedAt: Timestamp.fromDate(price.updatedAt) });
  const versionData = (record: VersionRecord) => ({
    state: record.state,
    sha256: record.sha256,
    size: record.size,
    storagePath: record.storagePath,
    signature: record.signature,
    keyId: record.keyId,
    signedAt: Timestamp.fromDate(record.signedAt),
    ...(record.publishedAt ? { publishedAt: Timestamp.fromDate(record.publishedAt) } : {}),
    ...(record.minAppVersion ? { minAppVersion: record.minAppVersion } : {}),
    ...(record.maxAppVersion ? { maxAppVersion: record.maxAppVersion } : {}),
    ...(record.yankedAt ? { yankedAt: Timestamp.fromDate(record.yankedAt) } : {}),
    ...(record.yankReason ? { yankReason: record.yankReason } : {}),
    listing: listingOf(record.listing),
    review: reviewData(record.review),
    ...(record.revocation ? { revocation: revocationData(record.revocation) } : {}),
    ...(record.provenance ? { provenance: JSON.parse(JSON.stringify(record.provenance)) as Provenance } : {}),
    ...(record.authorSignature ? { authorSignature: record.authorSignature, authorKeyId: record.authorKeyId } : {}),
    ...(record.hasIcon ? { hasIcon: true } : {}),
  });

  return withDeadlines("Firestore", {
    readModule,
    readVersion,
    moduleRef,
    versionRef,
    /** Every version of a module, read in a transaction. */
    async versionsIn(tx: Transaction, moduleId: string): Promise<VersionRecord[]> {
      return (await tx.get(moduleRef(moduleId).collection("versions"))).docs.map((doc) => readVersion(doc)!);
    },
    /** Versions of any module in one review state (a collection-group query of that field). */
    async versionsInReview(state: Review["state"]): Promise<VersionRecord[]> {
      return (await db.collectionGroup("versions").where("review.state", "==", state).get()).docs.map((doc) => readVersion(doc)!);
    },
    /** Every published version of any module (the TUF repository's first targets). */
    async publishedVersions(): Promise<VersionRecord[]> {
      return (await db.collectionGroup("versions").where("state", "==", "published").get()).docs.map((doc) => readVersion(doc)!);
    },
    /** Versions of any module stored with this package hash (a collection-group query of that field). */
    async versionsWithSha256(sha256: string): Promise<VersionRecord[]> {
      return (await db.collectionGroup("versions").where("sha256", "==", sha256).get()).docs.map((doc) => readVersion(doc)!);
    },
    async getModule(moduleId: string): Promise<ModuleRecord | null> {
      return readModule(await moduleRef(moduleId).get());
    },
    async getVersion(moduleId: string, version: string): Promise<VersionRecord | null> {
      return readVersion(await versionRef(moduleId, version).get());
    },
    /** A module and one of its versions, in one batched read (or in a transaction). */
    async getModuleAndVersion(moduleId: string, version: string, tx?: Transaction) {
      const refs = [moduleRef(moduleId), versionRef(moduleId, version)] as const;
      const [moduleSnapshot, versionSnapshot] = tx ? await tx.getAll(...refs) : await db.getAll(...refs);
      return { module: readModule(moduleSnapshot), version: readVersion(versionSnapshot), moduleSnapshot, versionSnapshot };
    },
    /** Several modules in one batched read, in the order asked (null for unknown ones). */
    async getModules(moduleIds: string[]): Promise<(ModuleRecord | null)[]> {
      if (moduleIds.length === 0) return [];
      return (await db.getAll(...moduleIds.map(moduleRef))).map(readModule);
    },
    /** Every module in the marketplace: what a search catalog starts from when it has no snapshot. */
    async listed(): Promise<ModuleRecord[]> {
      return (await modules.where("listed", "==", true).get()).docs.map((doc) => readModule(doc)!);
    },
    async all(): Promise<ModuleRecord[]> {
      return (await modules.get()).docs.map((doc) => readModule(doc)!);
    },
    /** A business's private modules with a published version (§26). */
    async listedOfBusiness(businessId: string): Promise<ModuleRecord[]> {
      return (await modules.where("businessId", "==", businessId).where("listed", "==", true).get()).docs.map((doc) => readModule(doc)!);
    },
    async byPublisher(publisherId: string): Promise<ModuleRecord[]> {
      return (await modules.where("publisherId", "==", publisherId).get()).docs.map((doc) => readModule(doc)!);
    },
    async byDeveloper(developerId: string): Promise<ModuleRecord[]> {
      return (await modules.where("developerId", "==", developerId).get()).docs.map((doc) => readModule(doc)!);
    },
    async versions(moduleId: string): Promise<VersionRecord[]> {
      return (await moduleRef(moduleId).collection("versions").get()).docs.map((doc) => readVersion(doc)!);
    },
    /** A module the transaction has read as missing. */
    createModule(writer: Transaction, module: ModuleRecord): void {
      writeReadAsMissing(writer, moduleRef(module.id), moduleData(module));
    },
    setPolicy(writer: Transaction, moduleId: string, policy: PublishPolicy): void {
      writer.update(moduleRef(moduleId), { policy: { ...policy } });
    },
    /** Puts a module on sale at a price, or (null) makes it free; its Stripe Product is kept either way. */
    setPrice(writer: Transaction, moduleId: string, price: ModulePrice | null, stripeProductId: string): void {
      writer.update(moduleRef(moduleId), { price: price ? priceData(price) : FieldValue.delete(), stripeProductId });
    },
    /** Writes the whole module; with a precondition, only if it is unchanged since `lastUpdateTime`. */
    setModule(writer: Transaction | WriteBatch, module: ModuleRecord, precondition?: Precondition): void {
      writeWhole(writer, moduleRef(module.id), moduleData(module), ["description", "category", "entitlement", "revocation", "price", "stripeProductId", "businessId", "restriction"], precondition);
    },
    /** Writes the whole version; with a precondition, only if it is unchanged since `lastUpdateTime`. */
    setVersion(writer: Transaction | WriteBatch, record: VersionRecord, precondition?: Precondition): void {
      writeWhole(writer, versionRef(record.moduleId, record.version), versionData(record), ["publishedAt", "minAppVersion", "maxAppVersion", "yankedAt", "yankReason", "revocation", "provenance", "authorSignature", "authorKeyId", "hasIcon"], precondition);
    },
    /** Where every version's package is stored: one collection-group query of that field only. */
    async storagePaths(): Promise<Set<string>> {
      const snapshot = await db.collectionGroup("versions").select("storagePath").get();
      return new Set(snapshot.docs.map((doc) => doc.get("storagePath") as string));
    },
  });
});
