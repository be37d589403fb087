/**
 * Demo data for local runs, written idempotently: running it twice changes nothing but the
 * subscriptions' period ends, which it keeps relative to today.
 */
import { readFileSync } from "node:fs";
import { createHash } from "node:crypto";
import path from "node:path";
import { isDeepStrictEqual } from "node:util";
import { Readable } from "node:stream";
import { grantEntitlement } from "../functions/src/users/entitlements";
import { migrateMembers } from "../functions/src/businesses/members-migration";
import { addMember, createBusiness } from "../functions/src/businesses/operators";
import { systemActor } from "../functions/src/core/audit-log";
import { ApiError } from "../functions/src/core/errors";
import { DAY_MS } from "../functions/src/core/time";
import type { Deps } from "../functions/src/deps";
import { createDeveloperAccount } from "../functions/src/developers/accounts";
import { developerStore } from "../functions/src/developers/developer-store";
import { moduleStore } from "../functions/src/marketplace/module-store";
import { accountPublisher } from "../functions/src/publishing/publisher";
import { publishVersion, rebuildVersionSummaries, signPackage } from "../functions/src/publishing/service";
import type { Release } from "../functions/src/releases/schemas";
import { backfillSha512, listReleasesFor, publishRelease } from "../functions/src/releases/service";
import { setSubscription } from "../functions/src/subscriptions/service";
import { userStore } from "../functions/src/accounts/user-store";
import { businessStore } from "../functions/src/accounts/business-store";
import { verifyPublisher } from "../functions/src/publishers/service";
import { verifyDomainForBusiness } from "../functions/src/domains/service";
import { setSsoForBusiness } from "../functions/src/sso/service";
import { subscriptionStore } from "../functions/src/accounts/subscription-store";
import { fixedBlockmap } from "./demo/blockmap";
import { buildPackage } from "../packages/mpkg/src/archive";

export const DEMO_PASSWORD = "marketplace-demo";

export const DEMO_USERS = [
  { uid: "demo-alice", email: "alice@example.com", displayName: "Alice Anders", note: "owner of Acme Corp (active 'pro' subscription), direct 'beta-access'" },
  { uid: "demo-bob", email: "bob@example.com", displayName: "Bob Berg", note: "no business, no entitlements" },
  { uid: "demo-dana", email: "dana@example.com", displayName: "Dana Dev", note: "developer, publisher 'contoso'" },
] as const;

const DEMO_PUBLISHER = "contoso";
/** The domain an operator verified the demo publisher controls (§24). */
const DEMO_PUBLISHER_DOMAIN = "contoso.example";
/**
 * The demo business's customer at the local stack's Stripe stand-in, so that its owner's "Change
 * seats" opens the (stand-in's) Billing Portal (§24).
 */
const DEMO_STRIPE_CUSTOMER = "cus_demo_acme";
/**
 * The demo business's identity provider (§22): a domain an operator verified and a SAML provider
 * id with just-in-time membership, so that anyone signing in through `saml.acme` with an
 * `@acme.example` email on the Auth emulator joins Acme Corp.
 */
const DEMO_BUSINESS_DOMAIN = "acme.example";
const DEMO_SSO_PROVIDER = "saml.acme";

/** Published in this order; contoso.charts needs the 'pro' entitlement. Each package has a README, a CHANGELOG and an icon (§16). */
const NOTES = {
  homepage: "https://contoso.example/notes",
  license: "MIT",
  name: "Sticky Notes",
  summary: "Quick notes on your desktop.",
  description: "Jot down ideas, to-do lists and reminders on colourful notes that stay on your desktop and sync between devices.",
  category: "productivity",
  tags: ["notes", "reminders", "todo", "productivity"],
};
const CHARTS = {
  homepage: "https://contoso.example/charts",
  repository: "https://git.contoso.example/contoso/charts",
  issues: "https://git.contoso.example/contoso/charts/issues",
  license: "Apache-2.0",
  name: "Charts Pro",
  summary: "Bar, line and pie charts for your data.",
  description: "Plot tables and spreadsheets as bar, line, pie and scatter charts, build dashboards, and export graphs as images.",
  category: "data",
  tags: ["charts", "plot", "graphs", "dashboard", "visualization"],
  entitlement: "pro",
};
const DEMO_MODULES: ({ id: string; version: string; entitlement?: string; minAppVersion?: string; repository?: string; issues?: string } & typeof NOTES)[] = [
  { id: "contoso.notes", version: "1.0.0", ...NOTES },
  { id: "contoso.charts", version: "1.0.0", ...CHARTS },
  { id: "contoso.charts", version: "1.1.0", ...CHARTS, minAppVersion: "1.10.0" },
];


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

const INSTALLER_EXTENSION = { win32: "exe", darwin: "dmg", linux: "AppImage" } as const;

type DemoRelease = Pick<Release, "version" | "platform" | "arch" | "channel"> & { notes?: string };

const DEMO_RELEASES: DemoRelease[] = [
  { version: "1.9.0", platform: "win32", arch: "x64", channel: "stable", notes: "Faster start-up." },
  { version: "1.10.0", platform: "win32", arch: "x64", channel: "stable", notes: "Module marketplace." },
  { version: "1.10.0", platform: "win32", arch: "arm64", channel: "stable", notes: "Module marketplace." },
  { version: "1.11.0-beta.1", platform: "win32", arch: "x64", channel: "beta", notes: "Preview of offline mode." },
  { version: "1.10.0", platform: "darwin", arch: "arm64", channel: "stable", notes: "Module marketplace." },
  { version: "1.11.0-beta.1", platform: "darwin", arch: "arm64", channel: "beta", notes: "Preview of offline mode." },
  { version: "1.10.0", platform: "linux", arch: "x64", channel: "stable", notes: "Module marketplace." },
];

/**
 * Seeds through the services' own operations (entitlements, businesses, subscriptions, releases,
 * as the operator CLI calls them) and the API's own sign and publish code (modules): the same
 * paths as real data.
 */
export async function seedDemoData(deps: Deps): Promise<void> {
  for (const user of DEMO_USERS) {
    // Verified, as a real user who signed up would be: invitations (§17) need a verified email.
    const profile = { email: user.email, displayName: user.displayName, disabled: false, emailVerified: true };
    const existing = await deps.auth.getUser(user.uid).catch((error: { code?: string }) => {
      if (error.code !== "auth/user-not-found") throw error;
      return null;
    });
    if (!existing) {
      await deps.auth.createUser({ uid: user.uid, ...profile, password: DEMO_PASSWORD });
    } else if (existing.email !== profile.email || existing.displayName !== profile.displayName || existing.disabled || !existing.emailVerified) {
      // Only what differs: a new password or email would revoke the demo user's sessions at every start.
      await deps.auth.updateUser(user.uid, profile);
    }
    await userStore(deps.db).setDisplayName(user.uid, user.displayName);
  }
  if (!(await userStore(deps.db).get("demo-alice"))?.entitlements.includes("beta-access")) {
    await grantEntitlement(deps, { user: "demo-alice", key: "beta-access" });
  }

  // Local data kept from before §25 holds members in the business documents: they move first.
  await migrateMembers(deps);
  const now = deps.clock().getTime();
  for (const business of DEMO_BUSINESSES) {
    await createBusiness(deps, { id: business.id, name: business.name }).catch((error) => {
      if (!(error instanceof ApiError && error.code === "business_exists")) throw error;
    });
    await addMember(deps, { id: business.id, user: "demo-alice", role: business.role });
    const { status, plan, seats, periodEndInDays, entitlements } = business.subscription;
    const intended = { status, plan, seats, entitlements: [...entitlements], cancelAtPeriodEnd: false };
    const [kept] = await subscriptionStore(deps.db).getMany([business.id]);
    // Written again only when it no longer shows what the demo needs (its period has run on), so
    // a restart writes nothing, in the audit log neither.
    const stillIntended =
      kept !== null &&
      isDeepStrictEqual({ status: kept.status, plan: kept.plan, seats: kept.seats, entitlements: kept.entitlements, cancelAtPeriodEnd: kept.cancelAtPeriodEnd }, intended) &&
      (periodEndInDays > 0 ? kept.currentPeriodEnd.getTime() > now + DAY_MS : kept.currentPeriodEnd.getTime() < now + periodEndInDays * DAY_MS / 2);
    if (!stillIntended) {
      await setSubscription(deps, { business: business.id, ...intended, periodEnd: new Date(now + periodEndInDays * DAY_MS).toISOString() });
    }
  }
  await deps.db.runTransaction(async (tx) => {
    const businesses = businessStore(deps.db);
    const acme = businesses.read(await tx.get(businesses.ref("acme")));
    if (acme && !acme.stripeCustomerId) businesses.setStripeCustomer(tx, "acme", DEMO_STRIPE_CUSTOMER);
  });
  await verifyDomainForBusiness(deps, { id: "acme", domain: DEMO_BUSINESS_DOMAIN });
  await setSsoForBusiness(deps, { id: "acme", providerId: DEMO_SSO_PROVIDER, enforce: false, jit: true });

  for (const release of DEMO_RELEASES) {
    const fileName = `Marketplace-Setup-${release.version}-${release.arch}.${INSTALLER_EXTENSION[release.platform]}`;
    const bytes = demoInstaller(release);
    const [existing] = await listReleasesFor(deps, { platform: release.platform, channel: release.channel }).then((releases) =>
      releases.filter((item) => item.version === release.version && item.arch === release.arch),
    );
    if (existing?.sha256 === createHash("sha256").update(bytes).digest("hex")) continue;
    await publishRelease(deps, { ...release, fileName, replace: true }, { content: Readable.from([bytes]), size: bytes.length, blockmap: fixedBlockmap(bytes) });
  }
  // Demo releases kept from before SHA-512s were recorded get theirs, so the feeds offer them.
  await backfillSha512(deps);
  await seedDemoModules(deps);
}

/** The demo developer and modules, through the same account, sign and publish code as the API. */
async function seedDemoModules(deps: Deps): Promise<void> {
  const dana = DEMO_USERS[2];
  const developer =
    (await developerStore(deps.db).get(dana.uid)) ??
    (await createDeveloperAccount(deps.db, { id: dana.uid, email: dana.email, displayName: dana.displayName, publisherId: DEMO_PUBLISHER }, deps.clock()));
  for (const manifest of DEMO_MODULES) {
    const existing = await moduleStore(deps.db).getVersion(manifest.id, manifest.version);
    if (existing?.state === "published") continue;
    const bytes = await buildPackage(manifest, [
      { name: "dist/index.js", content: `export function activate() { return ${JSON.stringify(`${manifest.id}@${manifest.version}`)}; }\n` },
      { name: "README.md", content: demoReadme(manifest) },
      { name: "CHANGELOG.md", content: demoChangelog(manifest.version) },
      { name: "icon.png", content: readFileSync(path.join(__dirname, "demo", `${manifest.id.split(".")[1]}.png`)) },
      ...(manifest.id === "contoso.charts" ? [{ name: "docs/screenshot.png", content: readFileSync(path.join(__dirname, "demo", "charts-screenshot.png")) }] : []),
    ]);
    const publisher = accountPublisher(developer, systemActor("seed"));
    await signPackage(deps, publisher, bytes);
    await publishVersion(deps, publisher, manifest.id, manifest.version);
  }
  // Demo modules kept from before version summaries existed get theirs.
  await rebuildVersionSummaries(deps);
  const [profile] = (await developerStore(deps.db).profiles([DEMO_PUBLISHER])).values();
  if (profile?.verifiedDomain !== DEMO_PUBLISHER_DOMAIN) await verifyPublisher(deps, { publisherId: DEMO_PUBLISHER, domain: DEMO_PUBLISHER_DOMAIN });
}

function demoReadme(manifest: (typeof DEMO_MODULES)[number]): string {
  return [
    `# ${manifest.name}`,
    "",
    manifest.summary,
    "",
    ...(manifest.id === "contoso.charts" ? ["![A bar chart drawn by Charts Pro](docs/screenshot.png)", ""] : []),
    "## Getting started",
    "",
    "1. Install it from the marketplace in the desktop app.",
    `2. Open it from the **Modules** menu${manifest.entitlement ? ` (it needs the \`${manifest.entitlement}\` entitlement)` : ""}.`,
    "",
    "```js",
    `app.modules.open(${JSON.stringify(manifest.id)});`,
    "```",
    "",
    "Questions? See [the publisher's site](https://contoso.example/support).",
    "",
  ].join("\n");
}

function demoChangelog(version: string): string {
  const entries: Record<string, string> = { "1.1.0": "Line charts, and app 1.10 or later.", "1.0.0": "First release." };
  return ["# Changelog", "", ...Object.entries(entries).filter(([released]) => released <= version).flatMap(([released, text]) => [`## ${released}`, "", `- ${text}`, ""])].join("\n");
}

/** 256 KiB of deterministic stand-in installer bytes, different for each release. */
/**
 * A demo installer of 1 MiB: the same bytes for every version of a platform and arch, but for 2 of
 * its 16 blocks, so an update from one demo version to the next downloads an eighth of it (§19).
 */
function demoInstaller(release: DemoRelease): Buffer {
  const bytes = installerBytes(`${release.platform}-${release.arch}`, 1024 * 1024);
  const changed = createHash("sha256").update(release.version + release.channel).digest();
  for (const block of [changed[0] % 16, 8 + (changed[1] % 8)]) installerBytes(`${release.version}-${release.channel}-${block}`, 64 * 1024).copy(bytes, block * 64 * 1024);
  return bytes;
}

function installerBytes(seed: string, length: number): Buffer {
  const blocks: Buffer[] = [];
  let block = createHash("sha256").update(seed).digest();
  for (let size = 0; size < length; size += block.length) {
    blocks.push(block);
    block = createHash("sha256").update(block).digest();
  }
  return Buffer.concat(blocks).subarray(0, length);
}
