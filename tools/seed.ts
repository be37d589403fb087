/**
 * Demo data for local runs, written idempotently (fixed ids; running it twice changes nothing
 * but the subscription's period end, which it keeps a month ahead).
 */
import { createHash } from "node:crypto";
import { Timestamp } from "../functions/src/local";
import type { Deps } from "../functions/src/deps";
import { COLLECTIONS, moduleVersionDocument, readDocument, type ReleaseDocument } from "../functions/src/core/documents";
import { createDeveloperAccount, findDeveloper } from "../functions/src/developers/accounts";
import { publishVersion, signPackage } from "../functions/src/developers/publishing";
import { buildPackage } from "./mpkg";

export const DEMO_PASSWORD = "marketplace-demo";

export const DEMO_USERS = [
  { uid: "demo-alice", email: "alice@example.com", displayName: "Alice Anders", note: "owner of Acme Corp (active 'pro' subscription), direct 'beta-access'" },
  { uid: "demo-bob", email: "bob@example.com", displayName: "Bob Berg", note: "no business, no entitlements" },
  { uid: "demo-dana", email: "dana@example.com", displayName: "Dana Dev", note: "developer, publisher 'contoso'" },
] as const;

const DEMO_PUBLISHER = "contoso";

/** Published in this order; contoso.charts needs the 'pro' entitlement. */
const DEMO_MODULES = [
  { id: "contoso.notes", name: "Sticky Notes", version: "1.0.0", summary: "Quick notes on your desktop.", category: "productivity" },
  { id: "contoso.charts", name: "Charts Pro", version: "1.0.0", summary: "Bar, line and pie charts for your data.", category: "data", entitlement: "pro" },
  { id: "contoso.charts", name: "Charts Pro", version: "1.1.0", summary: "Bar, line and pie charts for your data.", category: "data", entitlement: "pro", minAppVersion: "1.10.0" },
];

const DAY = 24 * 60 * 60 * 1000;

type DemoRelease = Pick<ReleaseDocument, "version" | "platform" | "arch" | "channel"> & { notes?: string };

const DEMO_RELEASES: DemoRelease[] = [
  { version: "1.9.0", platform: "win32", arch: "x64", channel: "stable", notes: "Faster start-up." },
  { version: "1.10.0", platform: "win32", arch: "x64", channel: "stable", notes: "Module marketplace." },
  { version: "1.10.0", platform: "win32", arch: "arm64", channel: "stable", notes: "Module marketplace." },
  { version: "1.11.0-beta.1", platform: "win32", arch: "x64", channel: "beta", notes: "Preview of offline mode." },
  { version: "1.10.0", platform: "darwin", arch: "arm64", channel: "stable", notes: "Module marketplace." },
  { version: "1.11.0-beta.1", platform: "darwin", arch: "arm64", channel: "beta", notes: "Preview of offline mode." },
];

export async function seedDemoData(deps: Deps): Promise<void> {
  const { db, auth, store, clock } = deps;
  for (const user of DEMO_USERS) {
    const profile = { email: user.email, password: DEMO_PASSWORD, displayName: user.displayName, disabled: false };
    await auth.updateUser(user.uid, profile).catch(async (error: { code?: string }) => {
      if (error.code !== "auth/user-not-found") throw error;
      await auth.createUser({ uid: user.uid, ...profile });
    });
  }
  const now = clock();
  const batch = db.batch();
  batch.set(db.collection(COLLECTIONS.users).doc("demo-alice"), { displayName: "Alice Anders", entitlements: ["beta-access"] });
  batch.set(db.collection(COLLECTIONS.users).doc("demo-bob"), { displayName: "Bob Berg" });
  batch.set(db.collection(COLLECTIONS.businesses).doc("acme"), {
    name: "Acme Corp",
    memberIds: ["demo-alice"],
    roles: { "demo-alice": "owner" },
  });
  batch.set(db.collection(COLLECTIONS.subscriptions).doc("acme"), {
    status: "active",
    plan: "team",
    seats: 10,
    currentPeriodEnd: Timestamp.fromMillis(now.getTime() + 30 * DAY),
    cancelAtPeriodEnd: false,
    entitlements: ["pro"],
  });
  batch.set(db.collection(COLLECTIONS.businesses).doc("globex"), {
    name: "Globex",
    memberIds: ["demo-alice"],
    roles: { "demo-alice": "member" },
  });
  batch.set(db.collection(COLLECTIONS.subscriptions).doc("globex"), {
    status: "past_due",
    plan: "starter",
    seats: 3,
    currentPeriodEnd: Timestamp.fromMillis(now.getTime() - 10 * DAY),
    entitlements: ["maps"],
  });
  for (const release of DEMO_RELEASES) {
    const id = `${release.platform}-${release.arch}-${release.channel}-${release.version}`;
    const fileName = `Marketplace-Setup-${release.version}-${release.arch}.${release.platform === "win32" ? "exe" : "dmg"}`;
    const storagePath = `releases/${id}/${fileName}`;
    const bytes = installerBytes(id);
    await store.write(storagePath, bytes, { contentType: "application/octet-stream" });
    batch.set(db.collection(COLLECTIONS.releases).doc(id), {
      ...release,
      fileName,
      storagePath,
      size: bytes.length,
      sha256: createHash("sha256").update(bytes).digest("hex"),
      publishedAt: Timestamp.fromDate(new Date("2026-01-01T00:00:00.000Z")),
    });
  }
  await batch.commit();
  await seedDemoModules(deps);
}

/** The demo developer and modules, through the same account, sign and publish code as the API. */
async function seedDemoModules(deps: Deps): Promise<void> {
  const dana = DEMO_USERS[2];
  const developer =
    (await findDeveloper(deps.db, dana.uid)) ??
    (await createDeveloperAccount(deps.db, dana.uid, { email: dana.email, displayName: dana.displayName, publisherId: DEMO_PUBLISHER }, deps.clock()));
  for (const manifest of DEMO_MODULES) {
    const existing = readDocument(
      moduleVersionDocument,
      await deps.db.doc(`${COLLECTIONS.modules}/${manifest.id}/${COLLECTIONS.versions}/${manifest.version}`).get(),
    );
    if (existing?.state === "published") continue;
    const bytes = await buildPackage(manifest, [
      { name: "dist/index.js", content: `export function activate() { return ${JSON.stringify(`${manifest.id}@${manifest.version}`)}; }\n` },
      { name: "README.md", content: `# ${manifest.name}\n\n${manifest.summary}\n` },
    ]);
    await signPackage(deps, developer, bytes);
    await publishVersion(deps, developer, manifest.id, manifest.version);
  }
}

/** 256 KiB of deterministic stand-in installer bytes, different for each release. */
function installerBytes(seed: string): Buffer {
  const blocks: Buffer[] = [];
  let block = createHash("sha256").update(seed).digest();
  for (let size = 0; size < 256 * 1024; size += block.length) {
    blocks.push(block);
    block = createHash("sha256").update(block).digest();
  }
  return Buffer.concat(blocks);
}
