import { createHash } from "node:crypto";
import { exportJWK, generateKeyPair } from "jose";
import request from "supertest";
import type { Express } from "express";
import { auditLog, type CommitsWithChange } from "../src/core/audit-log";
import { instanceQueue } from "../src/core/concurrency";
import { IDEMPOTENCY_LEASE_MS, idempotencyKeys } from "../src/core/idempotency";
import { countDocuments } from "./support/fixtures";
import { modulePackage } from "./support/packages";
import { bearer, createDeveloper, createUser, eventually, expectProblem, publishModule, resetEmulators, signRequest, testApp, testDeps, type TestUser } from "./support/harness";

/** Contract §1, "Safe retries": an Idempotency-Key makes a retry of any creating or changing POST safe. */

const api = "/api/v1";

const businessesNamed = async (name: string) => {
  const { db } = await testDeps();
  return (await db.collection("businesses").where("name", "==", name).get()).size;
};

const auditEntries = async (action: string, target?: string) => {
  const { db } = await testDeps();
  const entries = await db.collection("auditLog").where("action", "==", action).get();
  return entries.docs.filter((doc) => target === undefined || doc.get("target") === target).length;
};

describe("safe retries with Idempotency-Key (§1)", () => {
  let app: Express;
  let owner: TestUser;

  beforeAll(async () => {
    await resetEmulators();
    app = await testApp({ config: { rateLimit: { perIpPerMinute: 1_000_000, perUserPerMinute: 1_000_000 } } });
    owner = await createUser();
  });

  const createBusiness = (user: TestUser, name: string, key?: string) => {
    const call = request(app).post(`${api}/businesses`).set(bearer(user));
    return (key === undefined ? call : call.set("Idempotency-Key", key)).send({ name });
  };

  it("does the work once and replays the first answer to a repeat with the same key and body", async () => {
    const first = await createBusiness(owner, "Once Corp", "create-once-1");
    expect(first.status).toBe(201);
    expect(first.headers["idempotency-replayed"]).toBeUndefined();
    const again = await createBusiness(owner, "Once Corp", "create-once-1");
    expect(again.status).toBe(201);
    expect(again.headers["idempotency-replayed"]).toBe("true");
    expect(again.headers["content-type"]).toMatch(/^application\/json/);
    expect(again.body).toEqual(first.body);
    expect(await businessesNamed("Once Corp")).toBe(1);
    expect(await auditEntries("business.create", first.body.id)).toBe(1);
    // The same body with its keys in another order is the same request.
    const reordered = await request(app).post(`${api}/businesses`).set(bearer(owner)).set("Idempotency-Key", "create-once-1").set("Content-Type", "application/json").send('{ "name" : "Once Corp" }');
    expect(reordered.status).toBe(201);
    expect(reordered.body.id).toBe(first.body.id);
  });

  it("refuses the same key with another body (422) or on another path, and a malformed key (400), changing nothing", async () => {
    expect((await createBusiness(owner, "Key Corp", "reused-key")).status).toBe(201);
    expectProblem(await createBusiness(owner, "Other Corp", "reused-key"), 422, "idempotency_key_reused");
    const elsewhere = await request(app).post(`${api}/developers/tokens`).set(bearer(owner)).set("Idempotency-Key", "reused-key").send({ name: "ci" });
    // Not a developer: refused before any key is looked at.
    expectProblem(elsewhere, 403, "not_a_developer");
    expect(await businessesNamed("Other Corp")).toBe(0);

    for (const key of ["", "x".repeat(256), "caf\u00e9"]) {
      const refused = await createBusiness(owner, "Malformed Corp", key);
      expectProblem(refused, 400, "invalid_request");
      expect(refused.body.errors).toEqual([expect.objectContaining({ path: "Idempotency-Key" })]);
    }
    expect(await businessesNamed("Malformed Corp")).toBe(0);
    expect((await createBusiness(owner, "Long Key Corp", "k".repeat(255))).status).toBe(201);
  });

  it("keeps keys per caller: another caller's same key and body is their own request", async () => {
    const other = await createUser();
    const mine = await createBusiness(owner, "Shared Key Corp", "shared-key");
    const theirs = await createBusiness(other, "Shared Key Corp", "shared-key");
    expect(theirs.status).toBe(201);
    expect(theirs.headers["idempotency-replayed"]).toBeUndefined();
    expect(theirs.body.id).not.toBe(mine.body.id);
    expect(await businessesNamed("Shared Key Corp")).toBe(2);
  });

  it("does the work once for 12 concurrent requests with one key: the others wait (409 request_in_progress) or replay", async () => {
    const answers = await Promise.all(Array.from({ length: 12 }, () => createBusiness(owner, "Burst Corp", "burst-key")));
    const created = answers.filter((answer) => answer.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(new Set(created.map((answer) => answer.body.id)).size).toBe(1);
    for (const answer of answers.filter((answer) => answer.status !== 201)) {
      expectProblem(answer, 409, "request_in_progress");
      expect(answer.headers["retry-after"]).toBe("1");
    }
    expect(await businessesNamed("Burst Corp")).toBe(1);
  });

  it("after a 503 whose write landed, the retry with the same key gets the first answer, and the work is done once", async () => {
    const business = (await createBusiness(owner, "Slow Corp")).body.id as string;
    const { db } = await testDeps();
    // Another change of this business holds its turn for longer than the request may last: the
    // invitation is answered 503 at the deadline, and lands when its turn comes.
    const impatient = await testApp({ config: { deadlines: { callMs: 2_000, requestMs: 1_500 } } });
    let release!: () => void;
    const held = instanceQueue(db, "businesses")(business, () => new Promise<void>((resolve) => (release = resolve)));
    const invite = () =>
      request(impatient).post(`${api}/businesses/${business}/invitations`).set(bearer(owner)).set("Idempotency-Key", "invite-slow").send({ email: "late@example.com" });
    const first = await invite();
    expectProblem(first, 503, "unavailable");
    expect(first.headers["retry-after"]).toBeDefined();
    expectProblem(await invite(), 409, "request_in_progress");
    release();
    await held;
    let replay!: request.Response;
    await eventually(async () => {
      replay = await invite();
      expect(replay.status).toBe(201);
    }, 10_000);
    expect(replay.headers["idempotency-replayed"]).toBe("true");
    // The token is shown once: a replay carries no acceptUrl.
    expect(replay.body).toEqual({ id: expect.any(String), email: "late@example.com", role: "member", seat: true, expiresAt: expect.any(String), acceptUrl: null });
    const pending = await request(app).get(`${api}/businesses/${business}/invitations`).set(bearer(owner));
    expect(pending.body.items.map((item: { id: string }) => item.id)).toEqual([replay.body.id]);
    expect(await auditEntries("business.invitation.create", business)).toBe(1);
  }, 30_000);

  describe("the key commits with the change", () => {
    const request = { scope: "uid-commit", fingerprint: "f", secrets: [] as string[] };
    /** The runner as an instance has it, with a clock the test moves past the attempt's lease. */
    const runnerAt = async (at: () => Date) => {
      const deps = await testDeps();
      return { deps, keys: idempotencyKeys({ db: deps.db, clock: at, logger: deps.logger }) };
    };
    const change = async (deps: Awaited<ReturnType<typeof testDeps>>, target: string, commitsWith: CommitsWithChange | undefined, answer?: unknown) =>
      auditLog(deps.db).commit({ kind: "user", id: "uid-commit", commitsWith }, { action: "test.change", target, answer }, new Date(), (batch) => batch.set(deps.db.doc(`commitTests/${target}`), { at: Date.now() }));

    it("a retry after an instance was lost past its commit gets the answer that committed with the change, and the work is done once", async () => {
      let now = new Date();
      const { deps, keys } = await runnerAt(() => now);
      let runs = 0;
      const created = { status: 201, body: { id: "lost-after-commit", secret: "shown once" } };
      const withAnswer = { ...request, secrets: ["secret"], success: { status: 201, body: true } };
      // The instance commits its change with its answer, then dies before the request records it (here: it fails).
      await expect(
        keys.run({ ...withAnswer, key: "lost-after-commit" }, async (commitsWith) => {
          runs += 1;
          await change(deps, "lost-after-commit", commitsWith, created.body);
          throw new Error("the instance is gone");
        }),
      ).rejects.toThrow("the instance is gone");
      const retry = () =>
        keys.run({ ...withAnswer, key: "lost-after-commit" }, async (commitsWith) => {
          runs += 1;
          await change(deps, "lost-after-commit", commitsWith, created.body);
          return created;
        });
      // At once (the first attempt's lease still runs), and after the lease as well.
      expect(await retry()).toEqual({ status: 201, body: { id: "lost-after-commit", secret: null }, headers: { "Idempotency-Replayed": "true" } });
      now = new Date(now.getTime() + IDEMPOTENCY_LEASE_MS + 1_000);
      expect((await retry()).body).toEqual({ id: "lost-after-commit", secret: null });
      expect(runs).toBe(1);
      expect(await auditEntries("test.change", "lost-after-commit")).toBe(1);
    });

    it("a change that committed without its answer (the first of a request's several) is never done twice: the retry waits, then is told the change stands", async () => {
      let now = new Date();
      const { deps, keys } = await runnerAt(() => now);
      let runs = 0;
      const run = () =>
        keys.run({ ...request, success: { status: 201, body: true }, key: "lost-between-commits" }, async (commitsWith) => {
          runs += 1;
          await change(deps, "lost-between-commits", commitsWith);
          throw new Error("the instance is gone");
        });
      await expect(run()).rejects.toThrow("the instance is gone");
      const waiting = await run().catch((error: unknown) => error);
      expect(waiting).toMatchObject({ code: "request_in_progress", headers: { "Retry-After": "1" } });
      now = new Date(now.getTime() + IDEMPOTENCY_LEASE_MS + 1_000);
      const told = await run().catch((error: unknown) => error);
      expect(told).toMatchObject({ code: "request_in_progress" });
      expect((told as { headers: Record<string, string> }).headers["Retry-After"]).toBeUndefined();
      expect(runs).toBe(1);
      expect(await auditEntries("test.change", "lost-between-commits")).toBe(1);
    });

    it("an attempt whose key was taken over after its lease commits nothing", async () => {
      let now = new Date();
      const { deps, keys } = await runnerAt(() => now);
      let resume!: () => void;
      const paused = new Promise<void>((resolve) => (resume = resolve));
      const slow = keys.run({ ...request, key: "taken-over" }, async (commitsWith) => {
        await paused;
        await change(deps, "taken-over-slow", commitsWith);
        return { status: 201, body: { by: "slow" } };
      });
      await eventually(async () => expect((await deps.db.collection("idempotencyKeys").where("scope", "==", "uid-commit").where("state", "==", "running").get()).size).toBe(1), 5_000);
      now = new Date(now.getTime() + IDEMPOTENCY_LEASE_MS + 1_000);
      const fast = await keys.run({ ...request, key: "taken-over" }, async (commitsWith) => {
        await change(deps, "taken-over-fast", commitsWith);
        return { status: 201, body: { by: "fast" } };
      });
      expect(fast.body).toEqual({ by: "fast" });
      resume();
      await expect(slow).rejects.toMatchObject({ code: 9 });
      expect([await auditEntries("test.change", "taken-over-fast"), await auditEntries("test.change", "taken-over-slow")]).toEqual([1, 0]);
      expect((await deps.db.doc("commitTests/taken-over-slow").get()).exists).toBe(false);
      expect((await keys.run({ ...request, key: "taken-over" }, async () => ({ status: 500 }))).body).toEqual({ by: "fast" });
    });
  });

  it("gives the key up after a refusal, so a retry runs again once the refusal no longer holds", async () => {
    const developer = await createDeveloper("keyco");
    await publishModule(developer, { id: "keyco.tool", name: "Tool", version: "1.0.0", summary: "A tool." });
    const yank = () =>
      request(app).post(`${api}/developers/modules/yank`).set(bearer(developer)).set("Idempotency-Key", "yank-1").send({ moduleId: "keyco.tool", version: "1.0.1", reason: "broken" });
    expectProblem(await yank(), 404, "version_not_found");
    await publishModule(developer, { id: "keyco.tool", name: "Tool", version: "1.0.1", summary: "A tool." });
    const done = await yank();
    expect(done.status).toBe(200);
    expect(done.headers["idempotency-replayed"]).toBeUndefined();
    expect((await yank()).headers["idempotency-replayed"]).toBe("true");
  }, 30_000);

  it("replays a created access token without its secret", async () => {
    const developer = await createDeveloper("tokenco");
    const create = () => request(app).post(`${api}/developers/tokens`).set(bearer(developer)).set("Idempotency-Key", "token-1").send({ name: "ci" });
    const first = await create();
    expect(first.status).toBe(201);
    expect(first.body.token).toMatch(/^mpt_/);
    const again = await create();
    expect(again.status).toBe(201);
    expect(again.body).toEqual({ ...first.body, token: null });
    const listed = await request(app).get(`${api}/developers/tokens`).set(bearer(developer));
    expect(listed.body.items).toHaveLength(1);
  }, 30_000);
});

describe("a keyed change commits its answer with it (§1)", () => {
  let app: Express;
  const receiverUrl = "http://127.0.0.1:9/hook";

  beforeAll(async () => {
    await resetEmulators();
    app = await testApp({
      config: {
        rateLimit: { perIpPerMinute: 1_000_000, perUserPerMinute: 1_000_000 },
        trustedPublishing: { issuers: ["https://ci.example"], audience: "marketplace" },
        webhooks: { ...(await testDeps()).config.webhooks, allowedHosts: ["127.0.0.1"] },
      },
    });
  });

  /**
   * The key's record as the change's own commit wrote it: done, with the answer the request gave
   * (what a retry gets if that answer is lost), in the same commit as the request's audit entry.
   */
  async function expectAnsweredInCommit(who: TestUser, key: string, first: request.Response, shownOnce: string[] = []) {
    expect(first.status).toBeGreaterThanOrEqual(200);
    expect(first.status).toBeLessThan(300);
    const { db } = await testDeps();
    const record = await db.doc(`idempotencyKeys/${createHash("sha256").update(`${who.uid}\n${key}`).digest("hex")}`).get();
    const entries = await db.collection("auditLog").where("requestId", "==", first.headers["x-request-id"]).get();
    expect(entries.size).toBeGreaterThan(0);
    expect(record.get("state")).toBe("done");
    expect(entries.docs.some((entry) => entry.createTime!.isEqual(record.updateTime!))).toBe(true);
    const withoutSecrets = first.body && typeof first.body === "object" && Object.keys(first.body).length > 0 ? { ...first.body, ...Object.fromEntries(shownOnce.map((field) => [field, null])) } : undefined;
    expect({ status: record.get("status"), body: record.get("body") === "" ? undefined : JSON.parse(record.get("body")) }).toEqual({ status: first.status, body: withoutSecrets });
  }

  const keyed = (call: request.Test, key: string) => call.set("Idempotency-Key", key);

  it("for a business's changes: create, invite, accept, decline, SCIM token, domain, publisher id, webhooks", async () => {
    const owner = await createUser();
    const created = await keyed(request(app).post(`${api}/businesses`).set(bearer(owner)), "b-create").send({ name: "Answer Corp" });
    await expectAnsweredInCommit(owner, "b-create", created);
    const businessId = created.body.id as string;
    const base = `${api}/businesses/${businessId}`;

    const invitee = await createUser();
    const { auth } = await testDeps();
    await auth.updateUser(invitee.uid, { emailVerified: true });
    const invited = await keyed(request(app).post(`${base}/invitations`).set(bearer(owner)), "b-invite").send({ email: invitee.email });
    await expectAnsweredInCommit(owner, "b-invite", invited, ["acceptUrl"]);
    const token = (invited.body.acceptUrl as string).split("/invitations/")[1];
    await expectAnsweredInCommit(invitee, "b-accept", await keyed(request(app).post(`${api}/invitations/accept`).set(bearer(invitee)), "b-accept").send({ token }));

    const other = await request(app).post(`${base}/invitations`).set(bearer(owner)).send({ email: "declines@example.test" });
    const decliner = await createUser();
    const declined = await keyed(request(app).post(`${api}/invitations/decline`).set(bearer(decliner)), "b-decline").send({ token: (other.body.acceptUrl as string).split("/invitations/")[1] });
    await expectAnsweredInCommit(decliner, "b-decline", declined);

    await expectAnsweredInCommit(owner, "b-scim", await keyed(request(app).post(`${base}/scim/tokens`).set(bearer(owner)), "b-scim").send({ name: "Entra" }), ["token"]);
    await expectAnsweredInCommit(owner, "b-domain", await keyed(request(app).post(`${base}/domains`).set(bearer(owner)), "b-domain").send({ domain: "answer-corp.example" }));
    await expectAnsweredInCommit(owner, "b-publisher", await keyed(request(app).post(`${base}/publisher`).set(bearer(owner)), "b-publisher").send({ publisherId: "answercorp" }));

    const hook = await keyed(request(app).post(`${base}/webhooks`).set(bearer(owner)), "b-hook").send({ url: receiverUrl, events: ["*"] });
    await expectAnsweredInCommit(owner, "b-hook", hook, ["secret"]);
    const hookBase = `${base}/webhooks/${hook.body.id}`;
    await expectAnsweredInCommit(owner, "b-rotate", await keyed(request(app).post(`${hookBase}/rotate-secret`).set(bearer(owner)), "b-rotate").send(), ["secret"]);
    await expectAnsweredInCommit(owner, "b-test", await keyed(request(app).post(`${hookBase}/test`).set(bearer(owner)), "b-test").send());
    await expectAnsweredInCommit(owner, "b-recover", await keyed(request(app).post(`${hookBase}/recover`).set(bearer(owner)), "b-recover").send({ since: new Date(Date.now() - 60_000).toISOString() }));
  }, 60_000);

  it("for a developer's changes: token, author key, sign, publish, yank, unyank, trusted publisher, webhook; and a review's report", async () => {
    const developer = await createDeveloper("answerdev");
    await expectAnsweredInCommit(developer, "d-token", await keyed(request(app).post(`${api}/developers/tokens`).set(bearer(developer)), "d-token").send({ name: "ci" }), ["token"]);
    const { publicKey } = await generateKeyPair("EdDSA", { crv: "Ed25519" });
    const { kty, crv, x } = await exportJWK(publicKey);
    await expectAnsweredInCommit(developer, "d-key", await keyed(request(app).post(`${api}/developers/keys`).set(bearer(developer)), "d-key").send({ name: "laptop", publicKey: { kty, crv, x } }));

    const bytes = await modulePackage({ id: "answerdev.tool", name: "Answer Tool", version: "1.0.0", summary: "A tool." });
    await expectAnsweredInCommit(developer, "d-sign", await keyed(signRequest(app, developer, bytes), "d-sign"));
    const version = { moduleId: "answerdev.tool", version: "1.0.0" };
    await expectAnsweredInCommit(developer, "d-publish", await keyed(request(app).post(`${api}/developers/modules/publish`).set(bearer(developer)), "d-publish").send(version));
    await expectAnsweredInCommit(developer, "d-yank", await keyed(request(app).post(`${api}/developers/modules/yank`).set(bearer(developer)), "d-yank").send({ ...version, reason: "broken" }));
    await expectAnsweredInCommit(developer, "d-unyank", await keyed(request(app).post(`${api}/developers/modules/unyank`).set(bearer(developer)), "d-unyank").send(version));
    const trusted = await keyed(request(app).post(`${api}/developers/modules/answerdev.tool/trusted-publishers`).set(bearer(developer)), "d-trusted").send({ issuer: "https://ci.example", subject: "repo:answer/tool:ref:refs/heads/main" });
    await expectAnsweredInCommit(developer, "d-trusted", trusted);
    await expectAnsweredInCommit(developer, "d-hook", await keyed(request(app).post(`${api}/developers/webhooks`).set(bearer(developer)), "d-hook").send({ url: receiverUrl, events: ["*"] }), ["secret"]);

    const reviewer = await createUser();
    expect((await request(app).post(`${api}/modules/confirm`).set(bearer(reviewer)).send({ moduleId: "answerdev.tool" })).status).toBe(200);
    const review = await request(app).put(`${api}/modules/answerdev.tool/reviews/me`).set(bearer(reviewer)).send({ rating: 2, title: "Meh" });
    expect(review.status).toBe(200);
    const reporter = await createUser();
    const reported = await keyed(request(app).post(`${api}/modules/answerdev.tool/reviews/${review.body.id}/report`).set(bearer(reporter)), "r-report").send({ reason: "spam" });
    await expectAnsweredInCommit(reporter, "r-report", reported);
  }, 60_000);
});

describe("many callers on one document (§1): 2xx or a contract 4xx, never a 503", () => {
  let app: Express;

  beforeAll(async () => {
    await resetEmulators();
    app = await testApp({ config: { rateLimit: { perIpPerMinute: 1_000_000, perUserPerMinute: 1_000_000 } } });
  });

  it("50 concurrent invitations to one business all answer 201, and 50 are pending", async () => {
    const owner = await createUser();
    const business = (await request(app).post(`${api}/businesses`).set(bearer(owner)).send({ name: "Busy Corp" })).body.id as string;
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, index) =>
        request(app).post(`${api}/businesses/${business}/invitations`).set(bearer(owner)).send({ email: `person${index}@example.com`, seat: false }),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(50).fill(201));
    const { db } = await testDeps();
    const stored = (await db.collection("businesses").doc(business).get()).get("invitations") as Record<string, unknown>;
    expect(Object.keys(stored)).toHaveLength(50);
    expect(await countDocuments("invitationTokens")).toBe(50);
    // The 51st in 24 hours is the contract's 429, not a 503.
    const over = await request(app).post(`${api}/businesses/${business}/invitations`).set(bearer(owner)).send({ email: "one-more@example.com", seat: false });
    expectProblem(over, 429, "rate_limited");
  }, 60_000);

  it("50 concurrent reviews of one module (and 20 updates by one user) all answer 200 with exact figures", async () => {
    const developer = await createDeveloper("busyco");
    await publishModule(developer, { id: "busyco.app", name: "Busy App", version: "1.0.0", summary: "Busy." });
    const reviewers = await Promise.all(Array.from({ length: 50 }, () => createUser()));
    for (const reviewer of reviewers) {
      expect((await request(app).post(`${api}/modules/confirm`).set(bearer(reviewer)).send({ moduleId: "busyco.app" })).status).toBe(200);
    }
    const review = (user: TestUser, rating: number) => request(app).put(`${api}/modules/busyco.app/reviews/me`).set(bearer(user)).send({ rating, title: `${rating} stars` });
    const answers = await Promise.all(reviewers.map((reviewer, index) => review(reviewer, (index % 5) + 1)));
    expect(answers.map((answer) => answer.status)).toEqual(Array(50).fill(200));
    // reviewers[0] rated 1; twenty concurrent updates of that one review all move it to 5.
    const updates = await Promise.all(Array.from({ length: 20 }, () => review(reviewers[0], 5)));
    expect(updates.map((answer) => answer.status)).toEqual(Array(20).fill(200));
    const listed = await request(app).get(`${api}/modules/busyco.app/reviews`);
    expect(listed.status).toBe(200);
    expect(listed.body.summary).toEqual({ average: 3.1, count: 50, histogram: { "1": 9, "2": 10, "3": 10, "4": 10, "5": 11 } });
  }, 120_000);
});
