/**
 * What operators do to the data the service reads: releases, entitlements, businesses and
 * subscriptions. The CLI and the demo seed both call these; every document is validated against
 * the service's own definition before it is written, and bad input writes nothing.
 */
import { createHash, randomUUID } from "node:crypto";
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import path from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { effectiveSubscriptionStatus } from "../../functions/src/access/rules";
import { loadUserAccess } from "../../functions/src/access/service";
import {
  ARCHES,
  BUSINESS_ROLES,
  businessDocument,
  CHANNELS,
  COLLECTIONS,
  entitlementKey,
  PLATFORMS,
  readDocument,
  releaseDocument,
  semverVersion,
  SUBSCRIPTION_STATUSES,
  subscriptionDocument,
  toIso,
} from "../../functions/src/core/documents";
import { documentId } from "../../functions/src/core/schemas";
import type { AdminContext } from "../../functions/src/local";
import { FieldPath, FieldValue, Timestamp, z } from "../../functions/src/local";
import { listReleases, type ReleaseFilter } from "../../functions/src/releases/service";

/** The input is wrong: nothing was attempted (exit code 2). */
export class UsageError extends Error {}
/** The operation could not be done as asked (exit code 1). */
export class OperationError extends Error {}

function parse<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const option = issue.path.length > 0 ? `--${String(issue.path[0]).replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}` : "input";
  throw new UsageError(`${option}: ${issue.message}`);
}

const rfc3339 = z
  .union([z.iso.datetime({ offset: true }), z.iso.date()], { error: "must be an RFC 3339 date, e.g. 2026-12-31 or 2026-12-31T00:00:00Z" })
  .transform((value) => new Date(value.length === 10 ? `${value}T00:00:00Z` : value));

export interface UserRef {
  uid: string;
  email: string | null;
  displayName: string | null;
}

/** A user by uid, or by email when the reference has an '@'. */
export async function resolveUser(ctx: AdminContext, reference: string): Promise<UserRef> {
  try {
    const user = reference.includes("@") ? await ctx.auth.getUserByEmail(reference) : await ctx.auth.getUser(reference);
    return { uid: user.uid, email: user.email ?? null, displayName: user.displayName ?? null };
  } catch (error) {
    if ((error as { code?: string }).code === "auth/user-not-found") throw new OperationError(`No user '${reference}'.`);
    throw error;
  }
}

// Releases ---------------------------------------------------------------------------------

const publishReleaseInput = z.object({
  file: z.string().min(1),
  version: semverVersion,
  platform: z.enum(PLATFORMS),
  arch: z.enum(ARCHES),
  channel: z.enum(CHANNELS).default("stable"),
  notes: z.string().max(10_000).optional(),
  replace: z.boolean().default(false),
});

export type PublishReleaseInput = z.input<typeof publishReleaseInput> & {
  onProgress?: (sentBytes: number, totalBytes: number) => void;
};

/**
 * Streams an installer to Storage (hashing it on the way), then writes its `releases` document;
 * if the document cannot be written the uploaded object is removed. One release per version,
 * platform, arch and channel, unless `replace`.
 */
export async function publishRelease(ctx: AdminContext, rawInput: PublishReleaseInput) {
  const input = parse(publishReleaseInput, rawInput);
  const file = await stat(input.file).catch(() => null);
  if (!file?.isFile()) throw new OperationError(`No file at '${input.file}'.`);

  const releases = ctx.db.collection(COLLECTIONS.releases);
  const same = await releases
    .where("version", "==", input.version)
    .where("platform", "==", input.platform)
    .where("arch", "==", input.arch)
    .where("channel", "==", input.channel)
    .get();
  const existing = same.docs[0];
  if (existing && !input.replace) {
    throw new OperationError(`Release ${existing.id} exists (${input.version} ${input.platform} ${input.arch} ${input.channel}); pass --replace to overwrite it.`);
  }
  const id = existing?.id ?? `${input.platform}-${input.arch}-${input.channel}-${input.version}`;
  const fileName = path.basename(input.file);
  const storagePath = `releases/${id}/${randomUUID()}/${fileName}`;

  const hash = createHash("sha256");
  let sent = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      sent += chunk.length;
      rawInput.onProgress?.(sent, file.size);
      done(null, chunk);
    },
  });
  const object = ctx.bucket.file(storagePath);
  await pipeline(
    createReadStream(input.file),
    meter,
    object.createWriteStream({ resumable: file.size > 8 * 1024 * 1024, contentType: "application/octet-stream" }),
  );

  const release = releaseDocument.parse({
    version: input.version,
    platform: input.platform,
    arch: input.arch,
    channel: input.channel,
    fileName,
    storagePath,
    size: sent,
    sha256: hash.digest("hex"),
    // --replace without --notes keeps the release's notes; --notes "" clears them.
    ...((notes) => (notes ? { notes } : {}))(input.notes ?? (existing && readDocument(releaseDocument, existing)?.notes)),
    publishedAt: Timestamp.fromDate(ctx.clock()),
  });
  try {
    if (existing) await releases.doc(id).set(release);
    else await releases.doc(id).create(release);
  } catch (error) {
    await object.delete({ ignoreNotFound: true });
    if ((error as { code?: number }).code === 6) throw new OperationError(`Release ${id} was created meanwhile; pass --replace to overwrite it.`);
    throw error;
  }
  const previousPath = existing ? readDocument(releaseDocument, existing)?.storagePath : undefined;
  if (previousPath && previousPath !== storagePath) await ctx.store.delete(previousPath);
  return (await listReleases(ctx.db, { platform: input.platform, channel: input.channel, arch: input.arch })).find((r) => r.id === id)!;
}

export async function listReleasesFor(ctx: AdminContext, filter: ReleaseFilter) {
  return listReleases(ctx.db, parse(z.object({ platform: z.enum(PLATFORMS).optional(), channel: z.enum(CHANNELS).optional() }), filter));
}

/** Removes the document first, so the API never points at a missing installer. */
export async function removeRelease(ctx: AdminContext, releaseId: string) {
  const ref = ctx.db.collection(COLLECTIONS.releases).doc(parse(z.object({ releaseId: documentId }), { releaseId }).releaseId);
  const release = readDocument(releaseDocument, await ref.get());
  if (!release) throw new OperationError(`No release '${releaseId}'.`);
  await ref.delete();
  await ctx.store.delete(release.storagePath);
  return { id: releaseId, version: release.version, platform: release.platform, arch: release.arch, channel: release.channel };
}

// Entitlements -----------------------------------------------------------------------------

export async function grantEntitlement(ctx: AdminContext, userReference: string, key: string) {
  parse(z.object({ key: entitlementKey }), { key });
  const user = await resolveUser(ctx, userReference);
  await ctx.db.collection(COLLECTIONS.users).doc(user.uid).set({ entitlements: FieldValue.arrayUnion(key) }, { merge: true });
  return { uid: user.uid, email: user.email, key, granted: true };
}

export async function revokeEntitlement(ctx: AdminContext, userReference: string, key: string) {
  parse(z.object({ key: entitlementKey }), { key });
  const user = await resolveUser(ctx, userReference);
  const ref = ctx.db.collection(COLLECTIONS.users).doc(user.uid);
  const held = ((await ref.get()).get("entitlements") as string[] | undefined) ?? [];
  if (!held.includes(key)) throw new OperationError(`User ${user.email ?? user.uid} has no direct '${key}' entitlement.`);
  await ref.update({ entitlements: FieldValue.arrayRemove(key) });
  return { uid: user.uid, email: user.email, key, granted: false };
}

// Businesses -------------------------------------------------------------------------------

export async function createBusiness(ctx: AdminContext, id: string, name: string) {
  const input = parse(z.object({ id: documentId, name: z.string().trim().min(1, "must not be empty").max(200) }), { id, name });
  const business = businessDocument.parse({ name: input.name, memberIds: [], roles: {} });
  const ref = ctx.db.collection(COLLECTIONS.businesses).doc(input.id);
  try {
    await ref.create(business);
  } catch (error) {
    if ((error as { code?: number }).code === 6) throw new OperationError(`Business '${id}' exists.`);
    throw error;
  }
  return { id, name: business.name, members: 0 };
}

export async function addMember(ctx: AdminContext, businessId: string, userReference: string, role: string = "member") {
  const { role: memberRole } = parse(z.object({ id: documentId, role: z.enum(BUSINESS_ROLES) }), { id: businessId, role });
  const ref = ctx.db.collection(COLLECTIONS.businesses).doc(businessId);
  const user = await resolveUser(ctx, userReference);
  await ctx.db.runTransaction(async (tx) => {
    if (!readDocument(businessDocument, await tx.get(ref))) throw new OperationError(`No business '${businessId}'.`);
    tx.update(ref, "memberIds", FieldValue.arrayUnion(user.uid), new FieldPath("roles", user.uid), memberRole);
  });
  return { businessId, uid: user.uid, email: user.email, role: memberRole };
}

export async function removeMember(ctx: AdminContext, businessId: string, userReference: string) {
  parse(z.object({ id: documentId }), { id: businessId });
  const ref = ctx.db.collection(COLLECTIONS.businesses).doc(businessId);
  const user = await resolveUser(ctx, userReference);
  await ctx.db.runTransaction(async (tx) => {
    const business = readDocument(businessDocument, await tx.get(ref));
    if (!business) throw new OperationError(`No business '${businessId}'.`);
    if (!business.memberIds.includes(user.uid)) throw new OperationError(`${user.email ?? user.uid} is not a member of '${businessId}'.`);
    tx.update(ref, "memberIds", FieldValue.arrayRemove(user.uid), new FieldPath("roles", user.uid), FieldValue.delete());
  });
  return { businessId, uid: user.uid, email: user.email, removed: true };
}

// Subscriptions ----------------------------------------------------------------------------

const subscriptionInput = z.object({
  business: documentId,
  status: z.enum(SUBSCRIPTION_STATUSES),
  plan: z.string().trim().min(1, "must not be empty").max(100),
  periodEnd: rfc3339,
  seats: z
    .preprocess(
      (value) => (typeof value === "string" && /^\d+$/.test(value) ? Number(value) : value),
      z.number({ error: "must be a whole number, e.g. 5" }).int("must be a whole number, e.g. 5").min(0),
    )
    .optional(),
  entitlements: z.array(entitlementKey).default([]),
  cancelAtPeriodEnd: z.boolean().default(false),
});

/** Writes a business's whole subscription document (what billing would write). */
export async function setSubscription(ctx: AdminContext, rawInput: z.input<typeof subscriptionInput>) {
  const input = parse(subscriptionInput, rawInput);
  const business = readDocument(businessDocument, await ctx.db.collection(COLLECTIONS.businesses).doc(input.business).get());
  if (!business) throw new OperationError(`No business '${input.business}'; create it first.`);
  const subscription = subscriptionDocument.parse({
    status: input.status,
    plan: input.plan,
    ...(input.seats !== undefined ? { seats: input.seats } : {}),
    currentPeriodEnd: Timestamp.fromDate(input.periodEnd),
    cancelAtPeriodEnd: input.cancelAtPeriodEnd,
    entitlements: [...new Set(input.entitlements)],
  });
  await ctx.db.collection(COLLECTIONS.subscriptions).doc(input.business).set(subscription);
  return {
    businessId: input.business,
    status: subscription.status,
    effectiveStatus: effectiveSubscriptionStatus({ status: subscription.status, currentPeriodEnd: input.periodEnd }, ctx.clock()),
    plan: subscription.plan,
    seats: subscription.seats ?? null,
    currentPeriodEnd: toIso(subscription.currentPeriodEnd),
    cancelAtPeriodEnd: subscription.cancelAtPeriodEnd ?? false,
    entitlements: subscription.entitlements,
  };
}

// Users ------------------------------------------------------------------------------------

/** A user's profile as the service sees it: effective entitlements with sources, businesses. */
export async function showUser(ctx: AdminContext, userReference: string) {
  const user = await resolveUser(ctx, userReference);
  const now = ctx.clock();
  const access = await loadUserAccess(ctx.db, user.uid, now);
  return {
    uid: user.uid,
    email: user.email,
    displayName: access.user?.displayName ?? user.displayName,
    entitlements: access.grants,
    businesses: access.memberships.map((membership) => ({
      id: membership.businessId,
      name: membership.name,
      role: membership.role,
      subscription: membership.subscription
        ? {
            status: effectiveSubscriptionStatus(
              { status: membership.subscription.status, currentPeriodEnd: membership.subscription.currentPeriodEnd.toDate() },
              now,
            ),
            plan: membership.subscription.plan,
            currentPeriodEnd: toIso(membership.subscription.currentPeriodEnd),
          }
        : null,
    })),
  };
}
