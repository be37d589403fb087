/**
 * Demo data for local runs, written idempotently: running it twice changes nothing but the
 * subscriptions' period ends, which it keeps relative to today.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Deps } from "../functions/src/deps";
import type { AdminContext } from "../functions/src/local";
import { addMember, createBusiness, grantEntitlement, listReleasesFor, OperationError, publishRelease, setSubscription } from "./admin/operations";
import { COLLECTIONS, moduleRefs, moduleVersionDocument, readDocument, type ReleaseDocument } from "../functions/src/core/documents";
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

const DEMO_BUSINESSES = [
  {
    id: "acme",
    name: "Acme Corp",
    role: "owner",
    subscription: { status: "active", plan: "team", seats: 10, periodEndInDays: 30, entitlements: ["pro"] },
  },
  {
    // Past due and beyond the grace period: effectively expired, so 'maps' is not granted.
    id: "globex",
    name: "Globex",
    role: "member",
    subscription: { status: "past_due", plan: "starter", seats: 3, periodEndInDays: -10, entitlements: ["maps"] },
  },
] as const;

type DemoRelease = Pick<ReleaseDocument, "version" | "platform" | "arch" | "channel"> & { notes?: string };

const DEMO_RELEASES: DemoRelease[] = [
  { version: "1.9.0", platform: "win32", arch: "x64", channel: "stable", notes: "Faster start-up." },
  { version: "1.10.0", platform: "win32", arch: "x64", channel: "stable", notes: "Module marketplace." },
  { version: "1.10.0", platform: "win32", arch: "arm64", channel: "stable", notes: "Module marketplace." },
  { version: "1.11.0-beta.1", platform: "win32", arch: "x64", channel: "beta", notes: "Preview of offline mode." },
  { version: "1.10.0", platform: "darwin", arch: "arm64", channel: "stable", notes: "Module marketplace." },
  { version: "1.11.0-beta.1", platform: "darwin", arch: "arm64", channel: "beta", notes: "Preview of offline mode." },
];

/**
 * Seeds through the operator CLI's operations (entitlements, businesses, subscriptions,
 * releases) and the API's own sign and publish code (modules): the same paths as real data.
 */
export async function seedDemoData(deps: Deps, admin: AdminContext): Promise<void> {
  for (const user of DEMO_USERS) {
    const profile = { email: user.email, password: DEMO_PASSWORD, displayName: user.displayName, disabled: false };
    await deps.auth.updateUser(user.uid, profile).catch(async (error: { code?: string }) => {
      if (error.code !== "auth/user-not-found") throw error;
      await deps.auth.createUser({ uid: user.uid, ...profile });
    });
    await deps.db.collection(COLLECTIONS.users).doc(user.uid).set({ displayName: user.displayName }, { merge: true });
  }
  await grantEntitlement(admin, "demo-alice", "beta-access");

  const now = deps.clock().getTime();
  for (const business of DEMO_BUSINESSES) {
    await createBusiness(admin, business.id, business.name).catch((error) => {
      if (!(error instanceof OperationError)) throw error;
    });
    await addMember(admin, business.id, "demo-alice", business.role);
    const { status, plan, seats, periodEndInDays, entitlements } = business.subscription;
    await setSubscription(admin, {
      business: business.id,
      status,
      plan,
      seats,
      periodEnd: new Date(now + periodEndInDays * DAY).toISOString(),
      entitlements: [...entitlements],
    });
  }

  const folder = mkdtempSync(path.join(tmpdir(), "demo-installers-"));
  try {
    for (const release of DEMO_RELEASES) {
      const fileName = `Marketplace-Setup-${release.version}-${release.arch}.${release.platform === "win32" ? "exe" : "dmg"}`;
      const bytes = installerBytes(fileName + release.channel);
      const existing = (await listReleasesFor(admin, { platform: release.platform, channel: release.channel })).find(
        (item) => item.version === release.version && item.arch === release.arch,
      );
      if (existing?.sha256 === createHash("sha256").update(bytes).digest("hex")) continue;
      const file = path.join(folder, fileName);
      writeFileSync(file, bytes);
      await publishRelease(admin, { ...release, file, replace: true });
    }
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
  await seedDemoModules(deps);
}

/** The demo developer and modules, through the same account, sign and publish code as the API. */
async function seedDemoModules(deps: Deps): Promise<void> {
  const dana = DEMO_USERS[2];
  const developer =
    (await findDeveloper(deps.db, dana.uid)) ??
    (await createDeveloperAccount(deps.db, dana.uid, { email: dana.email, displayName: dana.displayName, publisherId: DEMO_PUBLISHER }, deps.clock()));
  for (const manifest of DEMO_MODULES) {
    const existing = readDocument(moduleVersionDocument, await moduleRefs(deps.db, manifest.id, manifest.version).version.get());
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
