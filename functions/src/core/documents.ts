import { Timestamp, type DocumentSnapshot, type Firestore } from "firebase-admin/firestore";
import semver from "semver";
import { z } from "zod";

/**
 * The Firestore data model of the contract (§3): one definition of each document, shared by the
 * service and the operator tools. Documents written by other systems (billing, support) are
 * parsed leniently where the contract marks fields optional, and strictly where it does not.
 */
export const COLLECTIONS = {
  users: "users",
  activations: "activations",
  businesses: "businesses",
  subscriptions: "subscriptions",
  developers: "developers",
  modules: "modules",
  versions: "versions",
  releases: "releases",
  /** Claims of publisher ids (`publishers/{publisherId}` → `{ developerId }`), so each has one owner. */
  publishers: "publishers",
} as const;

const timestamp = z.instanceof(Timestamp);
/** A semver version as written in documents and manifests: "1.2.3", never "v1.2.3". */
export const semverVersion = z.string().refine((value) => semver.valid(value) === value, "must be a semver version such as 1.2.3");

/** An entitlement key, e.g. "pro" or "beta-access". */
export const ENTITLEMENT_KEY = /^[a-z0-9][a-z0-9_-]{0,63}$/;
export const entitlementKey = z.string().regex(ENTITLEMENT_KEY, "must be 1-64 of [a-z0-9_-], starting with a letter or digit");

export const BUSINESS_ROLES = ["owner", "admin", "member"] as const;
export const SUBSCRIPTION_STATUSES = ["active", "trialing", "past_due", "canceled", "expired"] as const;
export const PLATFORMS = ["win32", "darwin", "linux"] as const;
export const ARCHES = ["x64", "arm64"] as const;
export const CHANNELS = ["stable", "beta"] as const;

export type BusinessRole = (typeof BUSINESS_ROLES)[number];
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];
export type Platform = (typeof PLATFORMS)[number];
export type Arch = (typeof ARCHES)[number];
export type Channel = (typeof CHANNELS)[number];

export const userDocument = z.object({
  displayName: z.string().optional(),
  entitlements: z.array(z.string()).optional(),
});

export const businessDocument = z.object({
  name: z.string(),
  memberIds: z.array(z.string()),
  roles: z.record(z.string(), z.enum(BUSINESS_ROLES)).optional(),
});

export const subscriptionDocument = z.object({
  status: z.enum(SUBSCRIPTION_STATUSES),
  plan: z.string(),
  seats: z.number().int().nonnegative().optional(),
  currentPeriodEnd: timestamp,
  cancelAtPeriodEnd: z.boolean().optional(),
  entitlements: z.array(z.string()),
});

export const releaseDocument = z.object({
  version: semverVersion,
  platform: z.enum(PLATFORMS),
  arch: z.enum(ARCHES),
  channel: z.enum(CHANNELS),
  fileName: z.string().min(1),
  storagePath: z.string().min(1),
  size: z.number().int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  notes: z.string().optional(),
  publishedAt: timestamp,
});

export const activationDocument = z.object({
  moduleId: z.string(),
  version: z.string(),
  deviceId: z.string().optional(),
  activatedAt: timestamp,
  updatedAt: timestamp,
});

export const developerDocument = z.object({
  email: z.string().nullable(),
  displayName: z.string(),
  publisherId: z.string(),
  createdAt: timestamp,
});

export const VERSION_STATES = ["signed", "published"] as const;

/** The listing fields of a module, as its package's manifest gives them. */
export const moduleListing = z.object({
  name: z.string(),
  summary: z.string(),
  description: z.string().optional(),
  category: z.string().optional(),
  entitlement: z.string().optional(),
});

export const moduleDocument = moduleListing.extend({
  publisherId: z.string(),
  developerId: z.string(),
  /** Null until a first version is published. */
  latestVersion: z.string().nullable(),
  createdAt: timestamp,
  updatedAt: timestamp,
  downloads: z.number().int().nonnegative(),
  /** Whether the module is in the marketplace (it has a published version). */
  listed: z.boolean(),
  /** Lower-case words of id, name and summary, and their prefixes: what `q` matches. */
  searchTerms: z.array(z.string()),
});

export const moduleVersionDocument = z.object({
  state: z.enum(VERSION_STATES),
  sha256: z.string(),
  size: z.number().int().nonnegative(),
  storagePath: z.string(),
  signature: z.string(),
  keyId: z.string(),
  signedAt: timestamp,
  publishedAt: timestamp.optional(),
  minAppVersion: z.string().optional(),
  /** The manifest's listing fields, copied to the module when this version is published. */
  listing: moduleListing,
});

export type UserDocument = z.output<typeof userDocument>;
export type BusinessDocument = z.output<typeof businessDocument>;
export type SubscriptionDocument = z.output<typeof subscriptionDocument>;
export type ReleaseDocument = z.output<typeof releaseDocument>;
export type ActivationDocument = z.output<typeof activationDocument>;
export type DeveloperDocument = z.output<typeof developerDocument>;
export type DeveloperAccount = DeveloperDocument & { id: string };
export type ModuleListing = z.output<typeof moduleListing>;
export type ModuleDocument = z.output<typeof moduleDocument>;
export type ModuleVersionDocument = z.output<typeof moduleVersionDocument>;

/** `modules/{moduleId}` and its `versions/{version}` document. */
export function moduleRefs(db: Firestore, moduleId: string, version: string) {
  const module = db.collection(COLLECTIONS.modules).doc(moduleId);
  return { module, version: module.collection(COLLECTIONS.versions).doc(version) };
}

/** A document that does not match its definition: a data error, answered as a 500 and logged. */
export class MalformedDocumentError extends Error {
  constructor(
    readonly path: string,
    readonly issues: string[],
  ) {
    super(`Malformed document ${path}: ${issues.join("; ")}`);
    this.name = "MalformedDocumentError";
  }
}

/** The parsed data of an existing document, or null when it does not exist. */
export function readDocument<S extends z.ZodType>(schema: S, snapshot: DocumentSnapshot): z.output<S> | null {
  if (!snapshot.exists) return null;
  const result = schema.safeParse(snapshot.data());
  if (!result.success) {
    throw new MalformedDocumentError(
      snapshot.ref.path,
      result.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`),
    );
  }
  return result.data;
}

export const toIso = (value: Timestamp): string => value.toDate().toISOString();
