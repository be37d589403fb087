import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import request from "supertest";
import { admin, json, runAdmin } from "./support/admin";
import { countDocuments, putRelease, sha256Hex } from "./support/fixtures";
import { bearer, createDeveloper, createUser, expectProblem, publishModule, resetEmulators, storedObjects, testApp, testDeps } from "./support/harness";
import { signed, subscriptionEvent } from "./support/stripe-events";

const dir = mkdtempSync(path.join(tmpdir(), "admin-cli-"));
function installer(name: string, content: string): { file: string; sha256: string } {
  const file = path.join(dir, name);
  const bytes = Buffer.from(content.repeat(2000));
  writeFileSync(file, bytes);
  return { file, sha256: sha256Hex(bytes) };
}

describe("operator CLI", () => {
  beforeEach(resetEmulators);

  it("works on another Firestore database with --database, as a restore drill checks a restored backup", async () => {
    const id = `drill-${Date.now()}`;
    expect((await admin("business", "create", "--id", id, "--name", "Restored Co", "--database", "restore-drill")).code).toBe(0);
    expect(await json("business", "show", "--id", id, "--database", "restore-drill")).toMatchObject({ id, name: "Restored Co" });
    // The project's default database never saw it.
    const absent = await admin("business", "show", "--id", id);
    expect({ code: absent.code, stderr: absent.stderr }).toEqual({ code: 1, stderr: expect.stringMatching(/not_found|No business/) });
  });

  describe("release", () => {
    it("publish uploads the installer and GET /releases and the win32 redirect serve it", async () => {
      const { file, sha256 } = installer("Setup-1.2.0.exe", "MZ installer 1.2.0");
      const release = await json("release", "publish", "--file", file, "--version", "1.2.0", "--platform", "win32", "--arch", "x64", "--notes", "Fixes.");
      expect(release).toMatchObject({ id: "win32-x64-stable-1.2.0", version: "1.2.0", channel: "stable", fileName: "Setup-1.2.0.exe", sha256, notes: "Fixes." });

      const app = await testApp();
      expect((await request(app).get("/api/v1/releases")).body.items).toEqual([release]);
      const redirect = await request(app).get("/api/v1/releases/download/win32");
      expect(redirect.status).toBe(302);
      const bytes = Buffer.from(await (await fetch(redirect.headers.location)).arrayBuffer());
      expect(sha256Hex(bytes)).toBe(sha256);
    });

    it("refuses the same version, platform, arch and channel twice (exit 1) unless --replace, which swaps the installer", async () => {
      const first = installer("a.exe", "first");
      const second = installer("b.exe", "second");
      const args = ["--version", "2.0.0", "--platform", "win32", "--arch", "x64"];
      expect((await admin("release", "publish", "--file", first.file, ...args)).code).toBe(0);
      const again = await admin("release", "publish", "--file", second.file, ...args);
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/exists.*--replace/);
      const replaced = await json("release", "publish", "--file", second.file, ...args, "--replace");
      expect(replaced).toMatchObject({ id: "win32-x64-stable-2.0.0", sha256: second.sha256, fileName: "b.exe" });
      expect(await storedObjects("releases/")).toEqual([expect.stringMatching(/^releases\/win32-x64-stable-2\.0\.0\/[0-9a-f-]+\/b\.exe$/)]);
    });

    it("removes the uploaded installer when the release document cannot be written", async () => {
      const { db } = await testDeps();
      // Another tool holds the id the CLI would use, for a different release.
      await db.collection("releases").doc("win32-x64-stable-3.0.0").set({ placeholder: true });
      const result = await admin("release", "publish", "--file", installer("c.exe", "c").file, "--version", "3.0.0", "--platform", "win32", "--arch", "x64");
      expect(result.code).toBe(1);
      expect(await storedObjects("releases/")).toEqual([]);
    });

    it.each([
      [["--version", "1.0", "--platform", "win32", "--arch", "x64"], 2, /--version: must be a semver/],
      [["--version", "1.0.0", "--platform", "amiga", "--arch", "x64"], 2, /--platform: Invalid option: expected one of "win32"\|"darwin"\|"linux"/],
      [["--version", "1.0.0", "--platform", "win32"], 2, /required option '--arch/],
      [["--version", "1.0.0", "--platform", "win32", "--arch", "x64", "--channel", "nightly"], 2, /--channel: Invalid option: expected one of "stable"\|"beta"/],
    ])("refuses bad input %p with exit %i and writes nothing", async (args, code, message) => {
      const result = await admin("release", "publish", "--file", installer("d.exe", "d").file, ...args);
      expect(result.code).toBe(code);
      expect(result.stderr).toMatch(message);
      expect(await storedObjects("releases/")).toEqual([]);
      expect(await countDocuments("releases")).toBe(0);
    });

    it("shows upload progress on a terminal, from the first chunk to 100%, and none with --json", async () => {
      const file = path.join(dir, "big.exe");
      writeFileSync(file, Buffer.alloc(3 * 1024 * 1024, 7));
      const args = ["release", "publish", "--file", file, "--version", "4.0.0", "--platform", "linux", "--arch", "x64"];
      const shown = await runAdmin(args, { terminal: true });
      expect(shown.code).toBe(0);
      expect(shown.stderr).toContain("uploading [");
      expect(shown.stderr).toContain(`100% ${3 * 1024 * 1024}/${3 * 1024 * 1024} bytes`);
      const quiet = await runAdmin(["--json", ...args, "--replace"], { terminal: true });
      expect({ code: quiet.code, stderr: quiet.stderr }).toEqual({ code: 0, stderr: "" });
    });

    it("keeps a release's notes on --replace without --notes, and clears them with --notes \"\"", async () => {
      const args = ["--version", "5.0.0", "--platform", "win32", "--arch", "x64"];
      await json("release", "publish", "--file", installer("g.exe", "g").file, ...args, "--notes", "Fixes.");
      expect(await json("release", "publish", "--file", installer("h.exe", "h").file, ...args, "--replace")).toMatchObject({ notes: "Fixes.", fileName: "h.exe" });
      expect(await json("release", "publish", "--file", installer("i.exe", "i").file, ...args, "--replace", "--notes", "")).toMatchObject({ notes: null, fileName: "i.exe" });
    });

    it("records the SHA-512 of what it uploads, and backfills it, idempotently, for releases without one", async () => {
      const { file } = installer("s.exe", "sha512 installer");
      const release = await json("release", "publish", "--file", file, "--version", "6.0.0", "--platform", "linux", "--arch", "x64");
      const bytes = readFileSync(file);
      expect(release.sha512).toBe(createHash("sha512").update(bytes).digest("base64"));
      await putRelease("older", { version: "0.1.0", platform: "linux", arch: "x64", channel: "stable" });
      expect(await json("release", "backfill-sha512")).toEqual({ updated: ["older"] });
      expect(await json("release", "backfill-sha512")).toEqual({ updated: [] });
      const older = (await json("release", "list", "--platform", "linux")).find((item: { id: string }) => item.id === "older");
      expect(older.sha512).toMatch(/^[A-Za-z0-9+/]{86}==$/);
    });

    it("rolls a release out, halts it and yanks it, each taking effect on the next request", async () => {
      const args = ["--platform", "win32", "--arch", "x64"];
      await json("release", "publish", "--file", installer("r1.exe", "one").file, "--version", "7.0.0", ...args);
      const staged = await json("release", "publish", "--file", installer("r2.exe", "two").file, "--version", "7.1.0", ...args, "--rollout", "10");
      expect(staged.rolloutPercentage).toBe(10);
      const latest = async () => (await request(await testApp({ config: { memoryCacheMs: 0 } })).get("/api/v1/releases/download/win32")).headers.location;
      // Without a staging id the highest release above 0 is offered (its percentage is the client's to apply).
      expect(await latest()).toContain("win32-x64-stable-7.1.0/");
      expect((await json("release", "halt", "win32-x64-stable-7.1.0")).rolloutPercentage).toBe(0);
      expect(await latest()).toContain("win32-x64-stable-7.0.0/");
      expect((await json("release", "rollout", "win32-x64-stable-7.1.0", "--percentage", "100")).rolloutPercentage).toBe(100);
      expect(await latest()).toContain("win32-x64-stable-7.1.0/");
      expect(await json("release", "yank", "win32-x64-stable-7.1.0", "--reason", "crashes on start")).toMatchObject({ yankReason: "crashes on start" });
      expect(await latest()).toContain("win32-x64-stable-7.0.0/");
      const app = await testApp({ config: { memoryCacheMs: 0 } });
      expect((await request(app).get("/api/v1/releases")).body.items.map((item: { id: string }) => item.id)).toEqual(["win32-x64-stable-7.0.0"]);
      const gone = await request(app).get("/api/v1/releases/win32-x64-stable-7.1.0/download");
      expectProblem(gone, 410, "release_yanked");
      expect(gone.body.detail).toContain("crashes on start");
      await json("release", "unyank", "win32-x64-stable-7.1.0");
      expect((await request(app).get("/api/v1/releases/win32-x64-stable-7.1.0/download")).status).toBe(302);
      expect(await admin("release", "rollout", "win32-x64-stable-7.1.0", "--percentage", "120")).toMatchObject({ code: 2, stderr: "error: --percentage: must be a whole number from 0 to 100\n" });
      expect((await admin("release", "yank", "nope")).code).toBe(1);

      // An automatic ramp (§19): set, shown, ticked (too early to move), stopped.
      expect(await json("release", "ramp", "win32-x64-stable-7.1.0", "--steps", "1,10,100", "--every", "0.5", "--min-reports", "20")).toMatchObject({
        rolloutPercentage: 1,
        ramp: { state: "running", step: "1 of 3 (1%)", everyHours: 0.5, minReports: 20, maxFailureRate: 0.02 },
      });
      expect(await json("release", "status", "win32-x64-stable-7.1.0")).toMatchObject({ ramp: { nextStepDueAt: expect.any(String) }, failureRate: { rate: null, reports: 0 } });
      expect(await json("release", "tick")).toEqual([expect.objectContaining({ releaseId: "win32-x64-stable-7.1.0", outcome: "wait" })]);
      expect(await admin("release", "ramp", "win32-x64-stable-7.1.0", "--steps", "10,1", "--every", "1")).toMatchObject({ code: 2, stderr: expect.stringContaining("--steps: must be rising whole percentages") });
      expect((await json("release", "ramp", "win32-x64-stable-7.1.0", "--off")).ramp).toBeNull();
    });

    it("refuses a missing file with exit 1", async () => {
      const result = await admin("release", "publish", "--file", path.join(dir, "missing.exe"), "--version", "1.0.0", "--platform", "win32", "--arch", "x64");
      expect(result).toMatchObject({ code: 1, stderr: expect.stringMatching(/No file at/) });
    });

    it("lists as a table by default, and removes a release with its installer", async () => {
      await admin("release", "publish", "--file", installer("e.exe", "e").file, "--version", "1.9.0", "--platform", "darwin", "--arch", "arm64", "--channel", "beta");
      await admin("release", "publish", "--file", installer("f.exe", "f").file, "--version", "1.10.0", "--platform", "darwin", "--arch", "arm64", "--channel", "beta");
      const table = await admin("release", "list", "--platform", "darwin");
      expect(table.code).toBe(0);
      const lines = table.stdout.trim().split("\n");
      expect(lines[0]).toMatch(/^id\s+version\s+platform/);
      expect(lines.slice(2).map((line) => line.split(/\s+/)[1])).toEqual(["1.10.0", "1.9.0"]);

      expect((await admin("release", "remove", "darwin-arm64-beta-1.9.0")).code).toBe(0);
      expect((await json("release", "list")).map((r: { id: string }) => r.id)).toEqual(["darwin-arm64-beta-1.10.0"]);
      expect(await storedObjects("releases/darwin-arm64-beta-1.9.0/")).toEqual([]);
      expect((await admin("release", "remove", "darwin-arm64-beta-1.9.0")).code).toBe(1);
    });
  });

  describe("entitlements, businesses and subscriptions", () => {
    it("grant shows in GET /users/me; revoke takes it away; an unknown user is exit 1, a bad key exit 2", async () => {
      const user = await createUser();
      await json("entitlement", "grant", "--user", user.email, "--key", "pro");
      // No memory of callers between requests: each read sees what the operation just wrote.
      const app = await testApp({ config: { memoryCacheMs: 0 } });
      expect((await request(app).get("/api/v1/users/me").set(bearer(user))).body.entitlements).toEqual([{ key: "pro", source: "direct" }]);
      await json("entitlement", "revoke", "--user", user.uid, "--key", "pro");
      expect((await request(app).get("/api/v1/users/me").set(bearer(user))).body.entitlements).toEqual([]);
      expect((await admin("entitlement", "revoke", "--user", user.uid, "--key", "pro")).code).toBe(1);
      expect((await admin("entitlement", "grant", "--user", "nobody@example.test", "--key", "pro")).code).toBe(1);
      expect((await admin("entitlement", "grant", "--user", user.uid, "--key", "Not A Key")).code).toBe(2);
    });

    it("a business with a subscription lets its members download a paid module; its effective status shows in GET /subscriptions", async () => {
      const developer = await createDeveloper("acme");
      const app = await testApp({ config: { memoryCacheMs: 0 } });
      await publishModule(developer, { id: "acme.charts", version: "1.0.0", entitlement: "pro" });
      const member = await createUser();
      expectProblem(await request(app).get("/api/v1/modules/download/acme.charts").set(bearer(member)), 403, "not_entitled");

      await json("business", "create", "--id", "globex", "--name", "Globex");
      await json("business", "add-member", "--id", "globex", "--user", member.email, "--role", "admin");
      const future = new Date(Date.now() + 30 * 86400_000).toISOString();
      await json("subscription", "set", "--business", "globex", "--status", "active", "--plan", "team", "--period-end", future, "--seats", "5", "--entitlements", "pro,maps");

      expect((await request(app).get("/api/v1/modules/download/acme.charts").set(bearer(member))).status).toBe(200);
      expect((await request(app).get("/api/v1/subscriptions/globex").set(bearer(member))).body).toMatchObject({
        status: "active",
        plan: "team",
        seats: 5,
        entitlements: ["pro", "maps"],
      });
      const shown = await json("user", "show", "--user", member.uid);
      expect(shown).toMatchObject({
        uid: member.uid,
        entitlements: [
          { key: "pro", source: "subscription", businessId: "globex" },
          { key: "maps", source: "subscription", businessId: "globex" },
        ],
        businesses: [{ id: "globex", name: "Globex", role: "admin", seat: true, entitled: true, subscription: { status: "active", plan: "team" } }],
      });
      // Seats (§17): a second member without one draws nothing; `business show` says so.
      const seatless = await createUser();
      await json("business", "add-member", "--id", "globex", "--user", seatless.email, "--no-seat");
      expectProblem(await request(app).get("/api/v1/modules/download/acme.charts").set(bearer(seatless)), 403, "not_entitled");
      expect(await json("business", "show", "--id", "globex")).toMatchObject({
        id: "globex",
        plan: "team",
        status: "active",
        seatsPaid: 5,
        seatsUsed: 1,
        seatsHeld: 0,
        members: [
          { uid: member.uid, role: "admin", seat: true, entitled: true },
          { uid: seatless.uid, role: "member", seat: false, entitled: false },
        ],
      });
      // A large business's list continues page by page (§25).
      expect(await json("business", "show", "--id", "globex", "--limit", "1")).toMatchObject({ members: [{ uid: member.uid }], nextAfter: member.uid });
      const next = await json("business", "show", "--id", "globex", "--limit", "1", "--after", member.uid);
      expect(next).toMatchObject({ members: [{ uid: seatless.uid }], nextAfter: null });
      expect(next.members).toHaveLength(1);
      // A bad limit is the operator's input (exit 2); a member to continue after who is not one, a lookup that failed (1).
      for (const [bad, code] of [[["--limit", "0"], 2], [["--limit", "1001"], 2], [["--after", "nobody"], 1]] as const) {
        const refused = await admin("business", "show", "--id", "globex", ...bad);
        expect({ code: refused.code, stderr: refused.stderr }).toEqual({ code, stderr: expect.stringMatching(/limit|No member 'nobody'/) });
      }

      await json("subscription", "set", "--business", "globex", "--status", "past_due", "--plan", "team", "--period-end", "2020-01-01");
      expect((await request(app).get("/api/v1/subscriptions/globex").set(bearer(member))).body.status).toBe("expired");
      expectProblem(await request(app).get("/api/v1/modules/download/acme.charts").set(bearer(member)), 403, "not_entitled");

      await json("business", "remove-member", "--id", "globex", "--user", member.uid);
      expectProblem(await request(app).get("/api/v1/subscriptions/globex").set(bearer(member)), 404, "business_not_found");
    });

    it("user show lists activations and their devices; subscription set says when Stripe manages the subscription", async () => {
      const developer = await createDeveloper("acme");
      await publishModule(developer, { id: "acme.maps", version: "1.0.0" });
      const user = await createUser();
      for (const deviceId of ["pc-1", "laptop"]) {
        expect((await request(await testApp()).post("/api/v1/modules/confirm").set(bearer(user)).send({ moduleId: "acme.maps", deviceId })).status).toBe(200);
      }
      const shown = await json("user", "show", "--user", user.email);
      expect(shown.activations).toEqual([{ moduleId: "acme.maps", version: "1.0.0", activatedAt: expect.any(String), updatedAt: expect.any(String) }]);
      expect(shown.devices).toEqual([
        { moduleId: "acme.maps", deviceId: "pc-1", version: "1.0.0", activatedAt: expect.any(String), lastSeenAt: expect.any(String) },
        { moduleId: "acme.maps", deviceId: "laptop", version: "1.0.0", activatedAt: expect.any(String), lastSeenAt: expect.any(String) },
      ]);
      const table = await admin("user", "show", "--user", user.email);
      expect(table.stdout).toMatch(/devices:\n\s+moduleId\s+deviceId\s+activatedAt\s+lastSeenAt\s+version\n.*\n\s+acme\.maps\s+pc-1\s/);

      await json("business", "create", "--id", "manual", "--name", "Manual");
      const manual = await json("subscription", "set", "--business", "manual", "--status", "active", "--plan", "team", "--period-end", "2030-01-01");
      expect(manual.notice).toBeUndefined();

      const { payload, header } = signed(subscriptionEvent({ businessId: "stripe-co" }));
      expect((await request(await testApp()).post("/api/v1/billing/stripe/webhook").set("Content-Type", "application/json").set("Stripe-Signature", header).send(payload)).status).toBe(200);
      const fixed = await json("subscription", "set", "--business", "stripe-co", "--status", "active", "--plan", "team", "--period-end", "2030-01-01", "--seats", "9");
      expect(fixed).toMatchObject({ seats: 9, stripeSubscriptionId: "sub_1", notice: expect.stringContaining("Stripe manages this subscription (sub_1)") });
      const { db } = await testDeps();
      expect((await db.doc("subscriptions/stripe-co").get()).get("stripeSubscriptionId")).toBe("sub_1");
    });

    it("refuses bad subscription input with exit 2 and a missing business with exit 1, writing nothing", async () => {
      await json("business", "create", "--id", "initech", "--name", "Initech");
      const base = ["subscription", "set", "--business", "initech", "--status", "active", "--plan", "team"];
      expect(await admin(...base, "--period-end", "31/12/2026")).toMatchObject({ code: 2, stderr: expect.stringMatching(/--period-end: must be an RFC 3339 date/) });
      expect(await admin(...base, "--period-end", "2026-12-31", "--seats", "five")).toMatchObject({ code: 2, stderr: "error: --seats: must be a whole number, e.g. 5\n" });
      expect((await admin(...base, "--period-end", "2026-12-31", "--entitlements", "pro,BAD KEY")).code).toBe(2);
      expect((await admin("subscription", "set", "--business", "nope", "--status", "active", "--plan", "team", "--period-end", "2026-12-31")).code).toBe(1);
      expect((await admin("business", "create", "--id", "initech", "--name", "Again")).code).toBe(1);
      expect((await admin("business", "add-member", "--id", "nope", "--user", (await createUser()).uid)).code).toBe(1);
      expect(await countDocuments("subscriptions")).toBe(0);
    });
  });

  it("webhooks (§21): adds an operators' endpoint with its secret shown once, lists, updates, refuses bad URLs and events, and removes it", async () => {
    const endpoint = (await json("webhooks", "add", "https://203.0.114.7/ops", "--events", "release.halted,module.review.reported", "--description", "paging")) as { id: string; secret: string };
    expect(endpoint).toMatchObject({ id: expect.stringMatching(/^wh_/), secret: expect.stringMatching(/^whsec_/), events: ["release.halted", "module.review.reported"], disabled: false });
    const listed = (await json("webhooks", "list")) as { id: string }[];
    expect(listed.map((item) => item.id)).toEqual([endpoint.id]);
    expect(JSON.stringify(listed)).not.toContain("whsec_");
    expect(await json("webhooks", "update", endpoint.id, "--disable")).toMatchObject({ disabled: true, disabledReason: "Disabled by its owner." });
    const refused = await admin("webhooks", "add", "https://169.254.169.254/latest", "--events", "release.halted");
    expect([refused.code, refused.stderr]).toEqual([2, expect.stringContaining("not a public address")]);
    const wrongKind = await admin("webhooks", "add", "https://203.0.114.7/x", "--events", "business.member.joined");
    expect([wrongKind.code, wrongKind.stderr]).toEqual([2, expect.stringContaining("business.member.joined is not an event of")]);
    expect((await admin("webhooks", "deliveries", endpoint.id, "--status", "lost")).code).toBe(2);
    expect(await json("webhooks", "deliveries", endpoint.id)).toEqual([]);
    expect((await admin("webhooks", "remove", endpoint.id)).code).toBe(0);
    expect(await json("webhooks", "list")).toEqual([]);
    expect((await admin("webhooks", "remove", endpoint.id)).code).toBe(1);
  });

  it("business verify-domain and sso (§22): a domain held by one business, single sign-on with JIT, shown by business show", async () => {
    expect((await admin("business", "create", "--id", "idp-co", "--name", "Idp Co")).code).toBe(0);
    expect((await admin("business", "create", "--id", "rival", "--name", "Rival")).code).toBe(0);
    expect(await json("business", "verify-domain", "--id", "idp-co", "--domain", "Idp.Example")).toMatchObject({ businessId: "idp-co", domain: "idp.example", verifiedAt: expect.any(String) });
    const taken = await admin("business", "verify-domain", "--id", "rival", "--domain", "idp.example");
    expect([taken.code, taken.stderr]).toEqual([1, expect.stringContaining("Another business has verified idp.example")]);
    expect(await json("business", "sso", "--id", "idp-co", "--provider", "saml.idp", "--jit")).toEqual({ businessId: "idp-co", providerId: "saml.idp", enforce: false, jit: true });
    expect((await admin("business", "sso", "--id", "idp-co", "--provider", "google.com")).code).toBe(2);
    expect(await json("business", "show", "--id", "idp-co")).toMatchObject({ verifiedDomains: ["idp.example"], sso: { providerId: "saml.idp", enforce: false, jit: true } });
  });

  it("tuf init, status, resign and rotate (§23): the ceremony through the same services, refusing what cannot be signed", async () => {
    const keys = path.join(dir, "tuf-offline");
    const initialised = await json("tuf", "init", "--keys", keys);
    expect(initialised).toMatchObject({ root: { version: 1 }, bins: { count: 1024 }, offlineKeys: keys, written: 4, onlineKey: "TUF_ONLINE_KEY" });
    expect(readdirSync(keys).sort()).toEqual(["root-1.pem", "root-2.pem", "root-3.pem", "targets.pem"]);
    const again = await admin("tuf", "init", "--keys", keys);
    expect([again.code, again.stderr]).toEqual([1, "error: The TUF repository is initialised already: see `tuf status`.\n"]);
    expect(await json("tuf", "resign")).toEqual({ bins: 1024, snapshot: true, timestamp: true });
    // 32 bins to a transaction: 32 consistent steps, each with its own snapshot and timestamp.
    expect(await json("tuf", "status")).toMatchObject({ timestamp: { version: 33 }, snapshot: { version: 33 }, bins: { lowestVersion: 2, highestVersion: 2 }, rotating: false, pendingChanges: 0 });
    expect((await admin("tuf", "rotate", "root", "--keys", keys)).code).toBe(2);
    expect((await admin("tuf", "rotate", "everything", "--keys", keys, "--new-keys", path.join(dir, "x"))).code).toBe(2);
    // One root key alone cannot sign a new root.
    const lone = path.join(dir, "tuf-lone");
    mkdirSync(lone);
    copyFileSync(path.join(keys, "root-1.pem"), path.join(lone, "root-1.pem"));
    const refused = await admin("tuf", "rotate", "root", "--keys", lone, "--new-keys", path.join(dir, "tuf-root-refused"));
    expect([refused.code, refused.stderr]).toEqual([1, expect.stringContaining("1 of the current root's (2 needed)")]);
    const rotated = await json("tuf", "rotate", "root", "--keys", keys, "--new-keys", path.join(dir, "tuf-root-2"));
    expect(rotated).toMatchObject({ root: { version: 2 }, newKeys: ["root-1.pem", "root-2.pem", "root-3.pem"].map((name) => path.join(dir, "tuf-root-2", name)) });
    const reused = await admin("tuf", "rotate", "root", "--keys", path.join(dir, "tuf-root-2"), "--new-keys", path.join(dir, "tuf-root-2"));
    expect([reused.code, reused.stderr]).toEqual([1, expect.stringContaining("holds keys already")]);
  });

  it("says how to get credentials when --project has no Application Default Credentials (exit 1)", async () => {
    const saved = { ...process.env };
    const noCredentials = mkdtempSync(path.join(tmpdir(), "no-adc-"));
    for (const name of ["FIRESTORE_EMULATOR_HOST", "FIREBASE_AUTH_EMULATOR_HOST", "STORAGE_EMULATOR_HOST", "FIREBASE_STORAGE_EMULATOR_HOST", "GOOGLE_APPLICATION_CREDENTIALS"]) {
      delete process.env[name];
    }
    // No gcloud configuration to find credentials in, and no metadata server to ask.
    Object.assign(process.env, { CLOUDSDK_CONFIG: noCredentials, METADATA_SERVER_DETECTION: "none" });
    try {
      const result = await admin("--project", "some-project", "user", "show", "--user", "demo-bob");
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        "error: no Application Default Credentials for --project: run `gcloud auth application-default login` " +
          "(or set GOOGLE_APPLICATION_CREDENTIALS to a service-account key), or use --emulators.\n",
      );
    } finally {
      process.env = saved;
    }
  });

  it("works as a command (bin/marketplace-admin.js) with the same exit codes", async () => {
    const run = promisify(execFile);
    const bin = path.join(__dirname, "..", "..", "bin", "marketplace-admin.js");
    const ok = await run(process.execPath, [bin, "--json", "release", "list"], { env: process.env });
    expect(JSON.parse(ok.stdout)).toEqual([]);
    await expect(run(process.execPath, [bin, "release", "list", "--platform", "amiga"], { env: process.env })).rejects.toMatchObject({ code: 2 });
  });
});
