/**
 * The operator CLI: `npm run admin -- <command>` or `marketplace-admin <command>`. Each command
 * turns its arguments into one call of a service operation of `functions/src` (which validates
 * them) and prints what it returns.
 * Exit codes: 0 done, 1 the operation failed, 2 the command line is wrong.
 */
import { createReadStream, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { userInfo } from "node:os";
import path from "node:path";
import { Command, CommanderError } from "commander";
import { grantEntitlement, revokeEntitlement } from "../../functions/src/users/entitlements";
import { addMember, createBusiness, describeBusiness, removeMember } from "../../functions/src/businesses/service";
import { reportedReviews, setReviewHidden } from "../../functions/src/reviews/service";
import { BUSINESS_ROLES, SUBSCRIPTION_STATUSES } from "../../functions/src/access/rules";
import { ApiError, exitCodeFor } from "../../functions/src/core/errors";
import { adminContext, type AdminContext } from "../../functions/src/local";
import { rebuildVersionSummaries } from "../../functions/src/publishing/service";
import { approveVersion, listQuarantined, rejectVersion } from "../../functions/src/publishing/review";
import { addToBlocklist, listBlocklist, removeFromBlocklist } from "../../functions/src/checks/blocklist";
import { listRevocations, revokeModule, unrevokeModule } from "../../functions/src/revocations/service";
import { listAudit } from "../../functions/src/audit/service";
import { ARCHES, CHANNELS, PLATFORMS } from "../../functions/src/releases/rules";
import { backfillSha512, listReleasesFor, publishRelease, releaseHealth, releaseStatus, removeRelease, setRamp, setRollout, stopRamp, tickRamps, unyankRelease, yankRelease } from "../../functions/src/releases/service";
import { setSubscription } from "../../functions/src/subscriptions/service";
import { describeUser } from "../../functions/src/users/service";
import { listPurchases, refundPurchase } from "../../functions/src/payments/purchases";
import { dnsResolvers, stripeSettings, webhookSettings } from "../../functions/src/config";
import { randomBytes } from "node:crypto";
import { OPERATORS } from "../../functions/src/core/event-outbox";
import { cursorCodec } from "../../functions/src/core/pagination";
import { DELIVERY_STATUSES, type DeliveryStatus } from "../../functions/src/webhooks/delivery-store";
import { createWebhook, deleteWebhook, listDeliveries, listWebhooks, recover, redeliver, updateWebhook } from "../../functions/src/webhooks/service";
import { unverifyPublisher, verifyPublisher } from "../../functions/src/publishers/service";
import { verifyDomainForBusiness } from "../../functions/src/domains/service";
import { recheckDomains } from "../../functions/src/domains/recheck";
import { setSsoForBusiness } from "../../functions/src/sso/service";
import type { Logger } from "../../functions/src/core/logger";
import { resignOnlineRoles } from "../../functions/src/tuf/changes";
import { initializeRepository } from "../../functions/src/tuf/initialize";
import { rotateKeys, type RotatedRole } from "../../functions/src/tuf/rotation";
import { repositoryStatus } from "../../functions/src/tuf/status";
import { parsePrivateKeys, signerOf } from "../../functions/src/core/tuf-keys";
import { ensureTufKeyFile, ensureTufKeyFolder, readTufKeyFolder, writeNewKeys } from "../tuf-keys";
import { printResult, uploadProgress } from "./output";
import { emulatorHostEnv, HOST, LOCAL_DNS_PORT, LOCAL_PORTS, LOCAL_PROJECT_ID, LOCAL_STRIPE_PORT } from "../local-stack/addresses";

export interface Io {
  stdout: { write(text: string): unknown; isTTY?: boolean };
  stderr: { write(text: string): unknown; isTTY?: boolean };
  env: Record<string, string | undefined>;
}

/** Emulator addresses and project of the local stack (firebase.json). */
const LOCAL = { projectId: LOCAL_PROJECT_ID, ...emulatorHostEnv(LOCAL_PORTS) };

interface GlobalOptions {
  actor?: string;
  emulators?: boolean;
  project?: string;
  bucket?: string;
  database?: string;
  json?: boolean;
}

/** A command-line problem found before any operation runs (exit code 2). */
class UsageError extends Error {}

const oneOf = (values: readonly string[]) => values.join(", ");

interface PublishOptions {
  file: string;
  version: string;
  platform: string;
  arch: string;
  channel?: string;
  notes?: string;
  replace?: boolean;
  rollout?: string;
  blockmap?: string;
  ramp?: string;
  every?: string;
  maxFailureRate?: string;
  maxCrashRate?: string;
  minReports?: string;
}

export async function main(argv: string[], io: Io): Promise<number> {
  let exitCode = 0;
  const program = new Command("marketplace-admin")
    .description("Operator tool of the Marketplace API: installers, entitlements, businesses, subscriptions, module purchases.")
    .option("--emulators", `use the local emulators (${LOCAL.FIRESTORE_EMULATOR_HOST}, ${LOCAL.FIREBASE_AUTH_EMULATOR_HOST}, ${LOCAL.STORAGE_EMULATOR_HOST}; project ${LOCAL.projectId})`)
    .option("--project <id>", "Firebase project (with Application Default Credentials)")
    .option("--bucket <name>", "Storage bucket (default: STORAGE_BUCKET, else <project>.appspot.com)")
    .option("--database <id>", "a Firestore database other than (default): e.g. a backup restored for a restore drill")
    .option("--json", "print JSON instead of tables")
    .option("--actor <name>", "who you are in the audit log (default: MARKETPLACE_OPERATOR, else your login name)")
    .exitOverride()
    .configureOutput({ writeOut: (text) => io.stdout.write(text), writeErr: (text) => io.stderr.write(text) })
    .showHelpAfterError("(add --help for usage)");

  /** Runs an operation against the target project and prints what it returns. */
  const action =
    <A extends unknown[]>(run: (ctx: AdminContext, ...args: A) => Promise<unknown>) =>
    async (...args: A) => {
      const command = args.at(-1) as Command;
      const options = command.optsWithGlobals<GlobalOptions>();
      const ctx = openTarget(options, io);
      try {
        printResult(await run(ctx, ...args), { json: options.json ?? false, out: io.stdout });
      } finally {
        await ctx.close();
      }
    };
  const jsonOutput = (command: Command) => command.optsWithGlobals<GlobalOptions>().json ?? false;

  const release = program.command("release").description("desktop installer releases");
  release
    .command("publish")
    .description("upload an installer and publish its release")
    .requiredOption("--file <path>", "the installer file")
    .requiredOption("--version <semver>", "release version")
    .requiredOption("--platform <platform>", oneOf(PLATFORMS))
    .requiredOption("--arch <arch>", oneOf(ARCHES))
    .option("--channel <channel>", `${oneOf(CHANNELS)} (default stable)`)
    .option("--notes <text>", 'release notes (with --replace: kept unless given; --notes "" clears them)')
    .option("--replace", "overwrite an existing release of the same version, platform, arch and channel")
    .option("--rollout <percentage>", "share of callers offered the release, 0-100 (default 100)")
    .option("--blockmap <file>", "the .blockmap electron-builder wrote beside the installer: differential updates (checked against the installer)")
    .option("--ramp <steps>", "an automatic ramp, e.g. 1,5,25,50,100 (with --every; see release ramp)")
    .option("--every <hours>", "with --ramp: the least hours a step lasts")
    .option("--max-failure-rate <rate>", "with --ramp (default 0.02)")
    .option("--max-crash-rate <rate>", "with --ramp (default 0.01)")
    .option("--min-reports <n>", "with --ramp (default 50)")
    .action(
      action(async (ctx, options: PublishOptions, command: Command) => {
        const { file, blockmap, ramp, every, maxFailureRate, maxCrashRate, minReports, ...fields } = options;
        if ((ramp === undefined) !== (every === undefined)) throw new Error("--ramp and --every go together.");
        const info = await stat(file).catch(() => null);
        if (!info?.isFile()) throw new Error(`No file at '${file}'.`);
        const published = await publishRelease(
          ctx,
          { ...fields, replace: fields.replace ?? false, fileName: path.basename(file) } as Parameters<typeof publishRelease>[1],
          {
            content: createReadStream(file),
            size: info.size,
            ...(blockmap ? { blockmap: await readFile(blockmap).catch(() => Promise.reject(new Error(`No file at '${blockmap}'.`))) } : {}),
            onProgress: jsonOutput(command) ? undefined : uploadProgress(io.stderr),
          },
        );
        if (ramp === undefined) return published;
        return setRamp(ctx, { releaseId: published.id, steps: ramp, every: every!, maxFailureRate, maxCrashRate, minReports } as Parameters<typeof setRamp>[1]);
      }),
    );
  release
    .command("ramp")
    .description("ramp a release's rollout through steps automatically: it advances when a step has lasted and is healthy, and halts itself when a rate is exceeded")
    .argument("<releaseId>")
    .option("--steps <percentages>", "rising percentages, e.g. 1,5,25,50,100")
    .option("--every <hours>", "the least hours a step lasts (decimals allowed, e.g. 0.5)")
    .option("--max-failure-rate <rate>", "halt above this share of failed installs (default 0.02)")
    .option("--max-crash-rate <rate>", "halt above this share of crashed launches (default 0.01)")
    .option("--min-reports <n>", "reports a rate needs before it halts or lets a step advance (default 50)")
    .option("--off", "stop the ramp, keeping the rollout where it is")
    .action(
      action((ctx, releaseId: string, options: { steps?: string; every?: string; maxFailureRate?: string; maxCrashRate?: string; minReports?: string; off?: boolean }) => {
        if (options.off) return stopRamp(ctx, { releaseId });
        if (!options.steps || !options.every) throw new Error("Give --steps and --every (or --off).");
        return setRamp(ctx, { releaseId, ...options } as Parameters<typeof setRamp>[1]);
      }),
    );
  release
    .command("tick")
    .description("advance or halt every running ramp now, as the scheduled function does")
    .action(action((ctx) => tickRamps(ctx)));
  release
    .command("status")
    .description("a release's rollout, its ramp (step, when the next is due) and its health")
    .argument("<releaseId>")
    .action(action((ctx, releaseId: string) => releaseStatus(ctx, { releaseId })));
  release
    .command("list")
    .description("list releases, highest semver first")
    .option("--platform <platform>", oneOf(PLATFORMS))
    .option("--channel <channel>", oneOf(CHANNELS))
    .action(action((ctx, options: { platform?: string; channel?: string }) => listReleasesFor(ctx, options as Parameters<typeof listReleasesFor>[1])));
  release
    .command("rollout")
    .description("offer a release to a share of callers (staged rollout); takes effect on the next request")
    .argument("<releaseId>")
    .requiredOption("--percentage <0-100>", "share of callers; raising it only adds callers")
    .action(action((ctx, releaseId: string, options: { percentage: string }) => setRollout(ctx, { releaseId, percentage: options.percentage as unknown as number })));
  release
    .command("halt")
    .description("stop offering a release to anyone new (rollout 0)")
    .argument("<releaseId>")
    .action(action((ctx, releaseId: string) => setRollout(ctx, { releaseId, percentage: 0 })));
  release
    .command("yank")
    .description("withdraw a release: out of the list, redirects and feeds; its own download answers 410")
    .argument("<releaseId>")
    .option("--reason <text>")
    .action(action((ctx, releaseId: string, options: { reason?: string }) => yankRelease(ctx, { releaseId, reason: options.reason })));
  release
    .command("unyank")
    .description("put a yanked release back")
    .argument("<releaseId>")
    .action(action((ctx, releaseId: string) => unyankRelease(ctx, { releaseId })));
  release
    .command("health")
    .description("how the update went on the apps that reported: counts per event, failure and crash rates with the reports behind each")
    .argument("<releaseId>")
    .action(action((ctx, releaseId: string) => releaseHealth(ctx, { releaseId })));
  release
    .command("backfill-sha512")
    .description("compute the SHA-512 of releases stored without one (idempotent)")
    .action(action((ctx) => backfillSha512(ctx)));
  release
    .command("remove")
    .description("remove a release and its installer")
    .argument("<releaseId>")
    .action(action((ctx, releaseId: string) => removeRelease(ctx, { releaseId })));

  const module = program.command("module").description("modules");
  module
    .command("rebuild-summaries")
    .description("recompute every module's summary of published versions and file published names for the look-alike check (idempotent)")
    .action(action((ctx) => rebuildVersionSummaries(ctx)));
  module
    .command("revoke")
    .description("revoke a version (or, without --version, every version): never downloaded or confirmed again, refused by the app even offline")
    .argument("<moduleId>")
    .option("--version <semver>")
    .requiredOption("--reason <text>", "shown to the publisher and in the signed revocation list")
    .action(action((ctx, moduleId: string, options: { version?: string; reason: string }) => revokeModule(ctx, { moduleId, ...options })));
  module
    .command("unrevoke")
    .description("lift a version's revocation (or, without --version, the module's and every version's)")
    .argument("<moduleId>")
    .option("--version <semver>")
    .action(action((ctx, moduleId: string, options: { version?: string }) => unrevokeModule(ctx, { moduleId, ...options })));
  module
    .command("revocations")
    .description("the revocation list as it stands, with its serial")
    .action(action((ctx) => listRevocations(ctx)));

  const publisher = program.command("publisher").description("publishers: the verified badge on their modules (§24)");
  publisher
    .command("verify")
    .description("mark a publisher verified for a domain you checked it controls: its modules show the badge and the domain")
    .argument("<publisherId>")
    .requiredOption("--domain <domain>", "the domain shown beside the publisher's name, e.g. example.com")
    .action(action((ctx, publisherId: string, options: { domain: string }) => verifyPublisher(ctx, { publisherId, domain: options.domain })));
  publisher
    .command("unverify")
    .description("take the verified badge away")
    .argument("<publisherId>")
    .action(action((ctx, publisherId: string) => unverifyPublisher(ctx, { publisherId })));

  const review = program.command("review").description("versions quarantined by the package checks (look-alike names)");
  review
    .command("list")
    .description("quarantined versions with their findings, oldest first")
    .action(action((ctx) => listQuarantined(ctx)));
  review
    .command("approve")
    .description("let the publisher publish a quarantined version")
    .argument("<moduleId>")
    .argument("<version>")
    .option("--note <text>")
    .action(action((ctx, moduleId: string, version: string, options: { note?: string }) => approveVersion(ctx, { moduleId, version, ...options })));
  review
    .command("reject")
    .description("reject a quarantined version: its package is deleted and the publisher sees the reason")
    .argument("<moduleId>")
    .argument("<version>")
    .requiredOption("--reason <text>")
    .action(action((ctx, moduleId: string, version: string, options: { reason: string }) => rejectVersion(ctx, { moduleId, version, ...options })));

  const blocklist = program.command("blocklist").description("SHA-256s of files and packages refused at sign");
  blocklist
    .command("add")
    .description("refuse a file or package by its SHA-256; published packages with it are revoked")
    .argument("<sha256>")
    .requiredOption("--reason <text>")
    .action(action((ctx, sha256: string, options: { reason: string }) => addToBlocklist(ctx, { sha256, ...options })));
  blocklist
    .command("remove")
    .argument("<sha256>")
    .action(action((ctx, sha256: string) => removeFromBlocklist(ctx, { sha256 })));
  blocklist
    .command("list")
    .action(action((ctx) => listBlocklist(ctx)));

  program
    .command("audit")
    .description("the audit log")
    .command("list")
    .description("newest entries first")
    .option("--target <id>", "a module (its versions' entries included), moduleId@version, release id, business id, uid or SHA-256")
    .option("--since <date>", "RFC 3339 date or date-time")
    .option("--limit <n>", "at most this many (default 100)")
    .action(action((ctx, options: { target?: string; since?: string; limit?: string }) => listAudit(ctx, options)));

  const reviews = program.command("reviews").description("ratings and reviews: what people reported, and hiding");
  reviews
    .command("reported")
    .description("reviews people reported, most recently reported first")
    .option("--limit <n>", "at most this many (default 100)")
    .action(action((ctx, options: { limit?: string }) => reportedReviews(ctx, options)));
  reviews
    .command("hide")
    .description("takes a review out of the list and the figures (an audit entry)")
    .argument("<moduleId>")
    .argument("<reviewId>")
    .requiredOption("--reason <text>")
    .action(action((ctx, moduleId: string, reviewId: string, options: { reason: string }) => setReviewHidden(ctx, { moduleId, reviewId, reason: options.reason }, true)));
  reviews
    .command("unhide")
    .description("shows a hidden review again")
    .argument("<moduleId>")
    .argument("<reviewId>")
    .action(action((ctx, moduleId: string, reviewId: string) => setReviewHidden(ctx, { moduleId, reviewId }, false)));

  const entitlement = program.command("entitlement").description("direct entitlement grants");
  entitlement
    .command("grant")
    .requiredOption("--user <uid|email>")
    .requiredOption("--key <key>")
    .action(action((ctx, options: { user: string; key: string }) => grantEntitlement(ctx, options)));
  entitlement
    .command("revoke")
    .requiredOption("--user <uid|email>")
    .requiredOption("--key <key>")
    .action(action((ctx, options: { user: string; key: string }) => revokeEntitlement(ctx, options)));

  const business = program.command("business").description("businesses and their members");
  business
    .command("create")
    .requiredOption("--id <businessId>")
    .requiredOption("--name <name>")
    .action(action((ctx, options: { id: string; name: string }) => createBusiness(ctx, options)));
  business
    .command("add-member")
    .requiredOption("--id <businessId>")
    .requiredOption("--user <uid|email>")
    .option("--role <role>", `${oneOf(BUSINESS_ROLES)} (default member)`)
    .option("--no-seat", "add without a seat (by default the member takes one, if the paid seats allow)")
    .action(action((ctx, options: { id: string; user: string; role?: string; seat: boolean }) => addMember(ctx, options as Parameters<typeof addMember>[1])));
  business
    .command("show")
    .description("a business: plan, seats paid, used and held back, pending invitations, and one row per member with role, seat and entitlement")
    .requiredOption("--id <businessId>")
    .action(action((ctx, options: { id: string }) => describeBusiness(ctx, options)));
  business
    .command("verify-domain")
    .description("record a domain as verified for a business on the operator's word, without a DNS lookup (§22); refused when another business holds it")
    .requiredOption("--id <businessId>")
    .requiredOption("--domain <domain>")
    .action(action((ctx, options: { id: string; domain: string }) => verifyDomainForBusiness(ctx, options)));
  business
    .command("recheck-domains")
    .description("check the TXT record of every verified domain whose daily check is due (§22), as the scheduled domainChecks does: owners are emailed at a first failure, a record missing 7 days in a row releases its domain")
    .action(action((ctx, _options: object, command: Command) => recheckDomains({ ...ctx, logger: stderrLogger(io), config: { dnsResolvers: domainResolvers(command.optsWithGlobals<GlobalOptions>(), io.env) } })));
  business
    .command("sso")
    .description("set a business's single sign-on (§22): the SAML or OIDC provider id of Firebase Authentication, enforcement, just-in-time membership")
    .requiredOption("--id <businessId>")
    .option("--provider <providerId>", "saml.… or oidc.…; leave out to turn single sign-on off")
    .option("--enforce", "members reach the business only when signed in through the provider (owners excepted)")
    .option("--jit", "people of the business's verified domains join when they sign in through the provider")
    .action(action((ctx, options: { id: string; provider?: string; enforce?: boolean; jit?: boolean }) => setSsoForBusiness(ctx, { id: options.id, providerId: options.provider ?? null, enforce: options.enforce, jit: options.jit })));
  business
    .command("remove-member")
    .requiredOption("--id <businessId>")
    .requiredOption("--user <uid|email>")
    .action(action((ctx, options: { id: string; user: string }) => removeMember(ctx, options)));

  program
    .command("subscription")
    .description("business subscriptions")
    .command("set")
    .description("write a business's subscription")
    .requiredOption("--business <id>")
    .requiredOption("--status <status>", oneOf(SUBSCRIPTION_STATUSES))
    .requiredOption("--plan <plan>")
    .requiredOption("--period-end <date>", "RFC 3339 date or date-time")
    .option("--seats <n>")
    .option("--entitlements <keys>", "comma-separated entitlement keys")
    .option("--cancel-at-period-end")
    .action(
      action((ctx, { entitlements, cancelAtPeriodEnd, ...options }: { business: string; status: string; plan: string; periodEnd: string; seats?: string; entitlements?: string; cancelAtPeriodEnd?: boolean }) =>
        setSubscription(ctx, {
          ...options,
          entitlements: (entitlements ?? "").split(",").map((key) => key.trim()).filter(Boolean),
          cancelAtPeriodEnd: cancelAtPeriodEnd ?? false,
        } as Parameters<typeof setSubscription>[1]),
      ),
    );

  const purchases = program.command("purchases").description("module purchases (§20)");
  purchases
    .command("list")
    .description("purchases, newest first: of a module, of a buyer, else the latest 200")
    .option("--module <id>")
    .option("--user <uid|email>", "the buyer")
    .action(action((ctx, options: { module?: string; user?: string }) => listPurchases(ctx, options)));
  purchases
    .command("refund")
    .description("refund a purchase's payment through Stripe (STRIPE_SECRET_KEY), reversing the publisher's transfer and the fee; the webhook then records it")
    .argument("<purchaseId>")
    .option("--amount <minor units>", "a partial refund, in the currency's minor unit (default: all)")
    .option("--invoice <id>", "a subscription's invoice to refund (default: its latest paid one)")
    .option("--cancel", "also cancel the subscription at once, which ends its access")
    .option("--idempotency-key <key>", "repeat an earlier command's key (it prints the one it used) to retry it without refunding twice; default: a new key, a new refund")
    .action(
      action((ctx, purchaseId: string, options: { amount?: string; invoice?: string; cancel?: boolean; idempotencyKey?: string }, command: Command) => {
        const amount = options.amount === undefined ? undefined : Number(options.amount);
        if (amount !== undefined && !(Number.isInteger(amount) && amount > 0)) throw new UsageError(`--amount must be a positive whole number of minor units, got '${options.amount}'.`);
        const { invoice, cancel, idempotencyKey } = options;
        return refundPurchase({ ...ctx, stripe: refundStripe(command.optsWithGlobals<GlobalOptions>(), io.env), logger: stderrLogger(io), timeoutMs: 30_000 }, { purchaseId, amount, invoice, cancel, idempotencyKey });
      }),
    );

  // The operators' webhook endpoints (§21): the same operations as a business's or a publisher's.
  const webhookDeps = (ctx: AdminContext) => ({
    ...ctx,
    config: { webhooks: webhookSettings({ ...io.env, FIRESTORE_EMULATOR_HOST: io.env.FIRESTORE_EMULATOR_HOST ?? process.env.FIRESTORE_EMULATOR_HOST }) },
    logger: stderrLogger(io),
    cursors: cursorCodec(randomBytes(32)),
  });
  // The TUF repository (§23): the operators' ceremony and maintenance.
  const LOCAL_TUF = path.join(__dirname, "..", "..", ".local", "tuf");
  const keysFolder = (command: Command, given: string | undefined) => {
    if (given) return path.resolve(given);
    if (command.optsWithGlobals<GlobalOptions>().emulators) return path.join(LOCAL_TUF, "offline");
    throw new UsageError("Pass --keys <folder> with the offline keys (root-1..3.pem, targets.pem).");
  };
  /** TUF_ONLINE_KEY, else with --emulators the local stack's key. */
  const onlineKeyText = (command: Command) => {
    if (io.env.TUF_ONLINE_KEY) return io.env.TUF_ONLINE_KEY;
    const local = path.join(LOCAL_TUF, "online.pem");
    return command.optsWithGlobals<GlobalOptions>().emulators && existsSync(local) ? readFileSync(local, "utf8") : "";
  };
  const tufDeps = (ctx: AdminContext, command: Command) => ({ ...ctx, logger: stderrLogger(io), tufOnlineSigners: parsePrivateKeys(onlineKeyText(command)).map(signerOf) });
  const tuf = program.command("tuf").description("the TUF repository of modules (§23): keys, versions, expiries");
  tuf
    .command("init")
    .description("make the keys a folder lacks and the repository's first root, targets, bins, snapshot and timestamp; prints where the offline keys went")
    .option("--keys <folder>", "where the offline keys are (or are written): root-1..3.pem, targets.pem (default with --emulators: .local/tuf/offline)")
    .action(
      action(async (ctx, options: { keys?: string }, command: Command) => {
        const folder = keysFolder(command, options.keys);
        const written = ensureTufKeyFolder(folder);
        const configured = onlineKeyText(command);
        const onlineFile = configured ? null : path.join(folder, "online.pem");
        const [online] = parsePrivateKeys(onlineFile ? ensureTufKeyFile(onlineFile) : configured).map(signerOf);
        const offline = readTufKeyFolder(folder);
        const status = await initializeRepository({ ...ctx, logger: stderrLogger(io), tufOnlineSigners: [online] }, { root: offline.root, targets: offline.targets!, online });
        if (!status) throw new Error("The TUF repository is initialised already: see `tuf status`.");
        return {
          ...status,
          offlineKeys: folder,
          written: written.length,
          onlineKey: onlineFile ? `${onlineFile}: store it as the TUF_ONLINE_KEY secret, then keep this file offline or delete it` : "TUF_ONLINE_KEY",
        };
      }),
    );
  tuf
    .command("status")
    .description("each role's version and expiry, the bins, the online key's id, and changes not taken yet")
    .action(action((ctx) => repositoryStatus(ctx)));
  tuf
    .command("resign")
    .description("now: timestamp, snapshot and every bin, each with a new version and a fresh expiry (with TUF_ONLINE_KEY)")
    .action(action(async (ctx, _options: object, command: Command) => (await resignOnlineRoles(tufDeps(ctx, command), { all: true })) ?? { initialised: false }));
  tuf
    .command("rotate")
    .description("new keys for a role: a new root version signed by the current root keys (and a new root's own), so clients walk to it")
    .argument("<role>", "root, targets or online")
    .option("--keys <folder>", "the current offline keys (default with --emulators: .local/tuf/offline)")
    .option("--new-keys <folder>", "where the new keys are written (a new folder); with --emulators by default they replace the rotated ones in place, the old ones kept under retired/")
    .action(
      action(async (ctx, role: string, options: { keys?: string; newKeys?: string }, command: Command) => {
        if (!["root", "targets", "online"].includes(role)) throw new UsageError(`<role> must be root, targets or online, got '${role}'.`);
        const rotated = role as RotatedRole;
        const emulators = command.optsWithGlobals<GlobalOptions>().emulators ?? false;
        if (!options.newKeys && !emulators) throw new UsageError("Pass --new-keys <folder>: the new keys are written there.");
        const folder = keysFolder(command, options.keys);
        const current = readTufKeyFolder(folder);
        const staging = options.newKeys ? path.resolve(options.newKeys) : path.join(folder, `new-${Date.now()}`);
        const fresh = writeNewKeys(staging, rotated);
        const status = await rotateKeys(tufDeps(ctx, command), rotated, { currentRoot: current.root, targets: current.targets, next: fresh.signers }).catch((error: Error) => {
          // Keys of a rotation that did not happen must not be mistaken for the current ones.
          for (const file of fresh.files) rmSync(file, { force: true });
          throw error;
        });
        if (options.newKeys) {
          return { ...status, newKeys: fresh.files, ...(rotated === "online" ? { next: "put online.pem into the TUF_ONLINE_KEY secret and redeploy: changes wait until the functions hold it" } : {}) };
        }
        // The local stack: the new keys take the old ones' place; the old ones go to retired/.
        const retired = path.join(folder, "retired", new Date().toISOString().replace(/[:.]/g, "-"));
        mkdirSync(retired, { recursive: true });
        const placed = fresh.files.map((file) => {
          const target = rotated === "online" ? path.join(LOCAL_TUF, "online.pem") : path.join(folder, path.basename(file));
          if (existsSync(target)) renameSync(target, path.join(retired, path.basename(target)));
          renameSync(file, target);
          return target;
        });
        rmSync(staging, { recursive: true, force: true });
        return { ...status, newKeys: placed, retired, ...(rotated === "online" ? { next: "restart npm start: its functions sign with the new key from then on" } : {}) };
      }),
    );

  const eventList = (raw: string) => raw.split(",").map((type) => type.trim()).filter(Boolean);
  const webhooks = program.command("webhooks").description("the operators' webhook endpoints (§21): releases, quarantined versions, reported reviews");
  webhooks
    .command("add")
    .description("add an endpoint; its secret (whsec_…) is printed once")
    .argument("<url>")
    .requiredOption("--events <type,…>", "event types of GET /webhooks/event-types for operators, or *")
    .option("--description <text>")
    .action(action((ctx, url: string, options: { events: string; description?: string }) => createWebhook(webhookDeps(ctx), OPERATORS, ctx.actor!, null, { url, events: eventList(options.events), ...(options.description ? { description: options.description } : {}) })));
  webhooks
    .command("list")
    .description("the endpoints, without their secrets")
    .action(action(async (ctx) => (await listWebhooks(webhookDeps(ctx), OPERATORS)).items));
  webhooks
    .command("update")
    .description("change an endpoint's URL, events or description, or disable or enable it")
    .argument("<webhookId>")
    .option("--url <url>")
    .option("--events <type,…>")
    .option("--description <text>")
    .option("--disable", "stop sending to it")
    .option("--enable", "send to it again (its failures start afresh)")
    .action(
      action((ctx, webhookId: string, options: { url?: string; events?: string; description?: string; disable?: boolean; enable?: boolean }) => {
        if (options.disable && options.enable) throw new UsageError("Give --disable or --enable, not both.");
        const disabled = options.disable ? true : options.enable ? false : undefined;
        return updateWebhook(webhookDeps(ctx), OPERATORS, ctx.actor!, null, webhookId, {
          ...(options.url ? { url: options.url } : {}),
          ...(options.events ? { events: eventList(options.events) } : {}),
          ...(options.description !== undefined ? { description: options.description } : {}),
          ...(disabled !== undefined ? { disabled } : {}),
        });
      }),
    );
  webhooks
    .command("remove")
    .argument("<webhookId>")
    .action(action(async (ctx, webhookId: string) => (await deleteWebhook(webhookDeps(ctx), OPERATORS, ctx.actor!, webhookId), { webhookId, removed: true })));
  webhooks
    .command("deliveries")
    .description("an endpoint's messages of the last 30 days, newest first, with their attempts")
    .argument("<webhookId>")
    .option("--status <status>", DELIVERY_STATUSES.join(", "))
    .action(
      action(async (ctx, webhookId: string, options: { status?: string }) => {
        if (options.status && !(DELIVERY_STATUSES as readonly string[]).includes(options.status)) throw new UsageError(`--status must be one of ${oneOf(DELIVERY_STATUSES)}.`);
        return (await listDeliveries(webhookDeps(ctx), OPERATORS, webhookId, { limit: 100, ...(options.status ? { status: options.status as DeliveryStatus } : {}) })).items;
      }),
    );
  webhooks
    .command("redeliver")
    .description("send a message again, with the same webhook-id")
    .argument("<webhookId>")
    .argument("<messageId>")
    .action(action(async (ctx, webhookId: string, messageId: string) => (await redeliver(webhookDeps(ctx), OPERATORS, ctx.actor!, webhookId, messageId), { webhookId, messageId, queued: true })));
  webhooks
    .command("recover")
    .description("send again every message that failed since a time")
    .argument("<webhookId>")
    .requiredOption("--since <time>", "RFC 3339, e.g. 2026-11-20T00:00:00Z")
    .action(
      action((ctx, webhookId: string, options: { since: string }) => {
        const since = new Date(options.since);
        if (Number.isNaN(since.getTime())) throw new UsageError(`--since must be a time such as 2026-11-20T00:00:00Z, got '${options.since}'.`);
        return recover(webhookDeps(ctx), OPERATORS, ctx.actor!, webhookId, since);
      }),
    );

  program
    .command("user")
    .description("users")
    .command("show")
    .description("profile, effective entitlements with their sources, businesses, activations and devices")
    .requiredOption("--user <uid|email>")
    .action(action((ctx, options: { user: string }) => describeUser(ctx, options)));

  try {
    await program.parseAsync(argv, { from: "user" });
  } catch (error) {
    exitCode = exitCodeOf(error, io);
  }
  return exitCode;
}

/** Application Default Credentials that are missing or stale, as google-auth-library reports them. */
const MISSING_CREDENTIALS = /Could not load the default credentials|Could not refresh access token|default credentials/i;

/** An operation's input field as the option that sets it: periodEnd → --period-end. */
const optionOf = (field: string) => (field ? `--${field.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}` : "input");

function exitCodeOf(error: unknown, io: Io): number {
  if (error instanceof CommanderError) {
    // Commander has printed its message already.
    return error.code === "commander.helpDisplayed" || error.code === "commander.help" || error.code === "commander.version" ? 0 : 2;
  }
  if (error instanceof UsageError) {
    io.stderr.write(`error: ${error.message}\n`);
    return 2;
  }
  if (error instanceof ApiError) {
    const lines = error.errors?.length ? error.errors.map(({ path: field, message }) => `${optionOf(field)}: ${message}`) : [error.detail];
    io.stderr.write(lines.map((line) => `error: ${line}\n`).join(""));
    return exitCodeFor(error.code);
  }
  const message = (error as Error).message ?? String(error);
  if (MISSING_CREDENTIALS.test(message)) {
    io.stderr.write(
      "error: no Application Default Credentials for --project: run `gcloud auth application-default login` " +
        "(or set GOOGLE_APPLICATION_CREDENTIALS to a service-account key), or use --emulators.\n",
    );
    return 1;
  }
  io.stderr.write(`error: ${message}\n`);
  return 1;
}

let openCount = 0;

/** Stripe for refunds: STRIPE_SECRET_KEY and STRIPE_API_BASE, else with --emulators the local stack's own Stripe server. */
function refundStripe(options: GlobalOptions, env: Io["env"]) {
  if (!options.emulators || env.STRIPE_API_BASE) return stripeSettings(env);
  return stripeSettings({ STRIPE_SECRET_KEY: env.STRIPE_SECRET_KEY || "sk_test_local", STRIPE_API_BASE: `http://${HOST}:${LOCAL_STRIPE_PORT}` });
}

/** What a service logs while the CLI runs (e.g. why Stripe refused), on standard error. */
const stderrLogger = (io: Io): Logger => {
  const line = (message: string, fields?: Record<string, unknown>) => io.stderr.write(`detail: ${message}${fields ? ` ${JSON.stringify(fields)}` : ""}\n`);
  return { info: () => undefined, warn: line, error: line };
};

/** DNS for the domains' checks: DNS_RESOLVERS, else with --emulators the local stack's own DNS server. */
function domainResolvers(options: GlobalOptions, env: Io["env"]): string[] {
  return dnsResolvers(env.DNS_RESOLVERS ?? (options.emulators ? `${HOST}:${LOCAL_DNS_PORT}` : undefined));
}

/** The emulators when asked or when their host variables are set, else a real project. */
function openTarget(options: GlobalOptions, io: Io): AdminContext {
  const env = io.env;
  const hostsSet = Boolean(env.FIRESTORE_EMULATOR_HOST || env.FIREBASE_AUTH_EMULATOR_HOST || env.STORAGE_EMULATOR_HOST);
  if (options.emulators) {
    for (const name of ["FIRESTORE_EMULATOR_HOST", "FIREBASE_AUTH_EMULATOR_HOST", "STORAGE_EMULATOR_HOST"] as const) {
      process.env[name] = env[name] ?? LOCAL[name];
    }
  }
  const emulated = options.emulators || hostsSet;
  // Emulators need no credentials; without this the SDK probes the GCE metadata server.
  if (emulated) process.env.METADATA_SERVER_DETECTION ??= "none";
  const projectId = options.project ?? (options.emulators ? LOCAL.projectId : (env.GCLOUD_PROJECT ?? (emulated ? LOCAL.projectId : undefined)));
  if (!projectId) throw new UsageError("Pass --project <id> (with Application Default Credentials), or --emulators.");
  openCount += 1;
  return adminContext({
    actor: options.actor ?? env.MARKETPLACE_OPERATOR ?? userInfo().username,
    projectId,
    storageBucket: options.bucket ?? env.STORAGE_BUCKET ?? `${projectId}.appspot.com`,
    credentials: emulated ? "none" : "application-default",
    appName: `admin-${openCount}`,
    databaseId: options.database,
  });
}

if (require.main === module) {
  main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env }).then((code) => {
    process.exitCode = code;
  });
}
