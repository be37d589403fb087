/**
 * Documents of the data model written the way billing, support and other tools write them (raw,
 * by collection name: these are the writers outside the service), and counts of what is stored.
 */
import { homeSeatShard } from "../../src/access/seat-shards";
import { memberStore } from "../../src/accounts/member-store";
import { createHash } from "node:crypto";
import { Timestamp } from "firebase-admin/firestore";
import type { Release } from "../../src/releases/schemas";
import { testBucket, testDeps } from "./harness";

const DAY = 24 * 60 * 60 * 1000;
/** The SHA-256 of some bytes, as hex (the form the API answers). */
export const sha256Hex = (bytes: Buffer | ArrayBuffer) => createHash("sha256").update(Buffer.from(bytes as ArrayBuffer)).digest("hex");

export const daysFromNow = (days: number, now = new Date()) => Timestamp.fromMillis(now.getTime() + days * DAY);

export async function putUser(uid: string, data: { displayName?: string; entitlements?: string[] }) {
  const { db } = await testDeps();
  await db.collection("users").doc(uid).set(data);
}

/**
 * A business with these members (each holding a seat, since `seatSince` or since before seats
 * were recorded, as a support tool's business would; null in `seatSince`: no seat), replacing whatever the business had: written through the
 * member store, so its seat counts agree.
 */
export async function putBusiness(
  id: string,
  data: { name: string; memberIds: string[]; roles?: Record<string, "owner" | "admin" | "member">; seatSince?: Record<string, Date | null> },
) {
  const { db } = await testDeps();
  const members = memberStore(db);
  const existing = (await db.collection(`businesses/${id}/members`).get()).docs.map((doc) => members.read(doc)!);
  await db.runTransaction(async (tx) => {
    const current = await members.getMany(tx, id, [...new Set([...existing.map((member) => member.uid), ...data.memberIds])]);
    tx.set(db.collection("businesses").doc(id), { name: data.name });
    for (const before of current) if (before && !data.memberIds.includes(before.uid)) members.put(tx, id, before, null);
    for (const uid of data.memberIds) {
      const role = data.roles?.[uid] ?? "member";
      const before = current.find((member) => member?.uid === uid) ?? null;
      const seatSince = data.seatSince?.[uid];
      const seat = seatSince !== null;
      members.put(tx, id, before, { uid, role, joinedAt: seatSince ?? null, seat, seatAssignedAt: seatSince ?? null, seatShard: seat ? homeSeatShard(uid) : null, waitingSince: null, source: role === "owner" ? "owner" : "invitation", suspended: false, managed: false, scim: null, groups: [] });
    }
  });
}

export async function putSubscription(
  businessId: string,
  data: {
    status: "active" | "trialing" | "past_due" | "canceled" | "expired";
    plan?: string;
    seats?: number;
    currentPeriodEnd: Timestamp;
    cancelAtPeriodEnd?: boolean;
    entitlements: string[];
  },
) {
  const { db } = await testDeps();
  await db.collection("subscriptions").doc(businessId).set({ plan: "team", ...data });
}

/** A release with real installer bytes in Storage. */
export async function putRelease(
  id: string,
  release: Pick<Release, "version" | "platform" | "arch" | "channel"> & { notes?: string },
): Promise<{ bytes: Buffer; sha256: string }> {
  const { db } = await testDeps();
  const bytes = Buffer.from(`installer ${id} ${release.version} ${release.platform} ${release.arch} ${release.channel}\n`.repeat(50));
  const sha256 = sha256Hex(bytes);
  const fileName = `Marketplace-Setup-${release.version}-${release.arch}.exe`;
  const storagePath = `releases/${id}/${fileName}`;
  await (await testBucket()).file(storagePath).save(bytes, { resumable: false, contentType: "application/octet-stream" });
  await db
    .collection("releases")
    .doc(id)
    .set({ ...release, fileName, storagePath, size: bytes.length, sha256, publishedAt: Timestamp.now() });
  return { bytes, sha256 };
}

/** How many documents a collection (or subcollection path) holds. */
export async function countDocuments(collectionPath: string): Promise<number> {
  const { db } = await testDeps();
  return (await db.collection(collectionPath).count().get()).data().count;
}
