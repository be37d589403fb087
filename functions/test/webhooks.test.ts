import { Readable } from "node:stream";
import type { Express } from "express";
import request from "supertest";
import { Webhook } from "standardwebhooks";
import { createApp } from "../src/app";
import { auditLog, systemActor } from "../src/core/audit-log";
import { OPERATORS } from "../src/core/event-outbox";
import { outboundEvent } from "../src/core/event-types";
import type { Deps } from "../src/deps";
import { publishRelease, setRollout } from "../src/releases/service";
import { runDeployedFunctions, type DeployedFunctions } from "../src/local-functions";
import { attemptDelivery } from "../src/webhooks/dispatch";
import { deliveryId, deliveryStore } from "../src/webhooks/delivery-store";
import { createWebhook } from "../src/webhooks/service";
import { putBusiness } from "./support/fixtures";
import { startLocalDns, type LocalDns } from "../../tools/local-stack/dns-server";
import { startReceiver, type Received } from "./support/webhook-receiver";
import { bearer, createDeveloper, createUser, eventually, expectProblem, otherInstanceDeps, publishModule, resetEmulators, testDeps, type TestDeveloper, type TestUser } from "./support/harness";

/**
 * Contract §21 through the API and a local receiver that verifies every delivery with the
 * standardwebhooks library, delivered by the deployed functions (`webhookEvents` on each event,
 * `webhookSweep` here every half second instead of every minute), configured as deployed, from
 * the environment: retries here wait 0.2 s (WEBHOOK_RETRY_SCHEDULE).
 */
describe("webhooks (§21)", () => {
  let deps: Deps;
  let app: Express;
  let functions: DeployedFunctions;
  const environment = { ...process.env };
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let owner: TestUser;
  let businessId: string;
  let developer: TestDeveloper;
  let dns: LocalDns;

  const api = "/api/v1";
  const body = (received: Received) => JSON.parse(received.body) as { type: string; timestamp: string; data: Record<string, unknown> };
  /** Every request to a path verified with the endpoint's secret, as a receiver would. */
  const verified = (secret: string, requests: Received[]) => requests.map((received) => new Webhook(secret).verify(received.body, received.headers as Record<string, string>) as { type: string; data: Record<string, unknown> });
  const within5s = (check: () => void | Promise<void>) => eventually(async () => check(), 5_000);

  /** An endpoint of the test's business (or of `business`, one of the owner's own) for the receiver's `path`. */
  const addBusinessEndpoint = async (path: string, events: string[] = ["*"], business = businessId) => {
    const response = await request(app).post(`${api}/businesses/${business}/webhooks`).set(bearer(owner)).send({ url: `${receiver.origin}${path}`, events });
    expect(response.status).toBe(201);
    return response.body as { id: string; secret: string };
  };

  beforeAll(async () => {
    await resetEmulators();
    const base = await testDeps();
    // DNS through a local server that knows no name, as npm start's forwards what it does not hold.
    dns = await startLocalDns();
    deps = { ...base, config: { ...base.config, dnsResolvers: [dns.address], webhooks: { ...base.config.webhooks, allowedHosts: ["127.0.0.1", "localhost"], retryScheduleMs: [200, 200, 200] } } };
    app = createApp(deps);
    // The deployed functions read the same settings from the environment, as deployed.
    Object.assign(process.env, { DNS_RESOLVERS: dns.address, WEBHOOK_ALLOWED_HOSTS: "127.0.0.1,localhost", WEBHOOK_RETRY_SCHEDULE: "0.2,0.2,0.2" });
    functions = await runDeployedFunctions(deps.db, { triggers: ["webhookEvents"], schedules: { webhookSweep: 500 }, warn: deps.logger.warn });
    receiver = await startReceiver();
    owner = await createUser({ displayName: "Hook Owner" });
    businessId = `hooks-${owner.uid}`.toLowerCase();
    await putBusiness(businessId, { name: "Hooks Co", memberIds: [owner.uid], roles: { [owner.uid]: "owner" } });
    developer = await createDeveloper("hooked");
  });

  afterAll(async () => {
    await functions.stop();
    process.env = environment;
    await receiver.stop();
    await dns.stop();
  });

  it("lists the event catalog publicly, each type with its owner and the JSON Schema of its data", async () => {
    const response = await request(app).get(`${api}/webhooks/event-types`);
    expect(response.status).toBe(200);
    const items = response.body.items as { type: string; owner: string; schema: { type?: string; properties?: Record<string, unknown> } }[];
    expect(items).toEqual(expect.arrayContaining([expect.objectContaining({ type: "business.member.joined", owner: "business" }), expect.objectContaining({ type: "module.version.quarantined", owner: "operator" }), expect.objectContaining({ type: "webhook.test", owner: "any" })]));
    expect(items.find((item) => item.type === "release.halted")!.schema.properties).toEqual(expect.objectContaining({ releaseId: expect.anything(), reason: expect.anything() }));
  });

  it("a business's endpoint gets its invitations and new members, signed: the secret once, verified by standardwebhooks", async () => {
    const endpoint = await addBusinessEndpoint("/business", ["business.invitation.created", "business.member.joined", "business.invitation.accepted"]);
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const listed = await request(app).get(`${api}/businesses/${businessId}/webhooks`).set(bearer(owner));
    expect(listed.body.items).toEqual([expect.objectContaining({ id: endpoint.id, url: `${receiver.origin}/business`, disabled: false })]);
    expect(JSON.stringify(listed.body)).not.toContain("whsec_");

    const invited = await createUser({ displayName: "New Hire" });
    const invitation = await request(app).post(`${api}/businesses/${businessId}/invitations`).set(bearer(owner)).send({ email: invited.email, seat: false });
    expect(invitation.status).toBe(201);
    await within5s(() => expect(receiver.at("/business")).toHaveLength(1));
    const [created] = verified(endpoint.secret, receiver.at("/business"));
    expect(created).toEqual({ type: "business.invitation.created", timestamp: expect.any(String), data: { businessId, id: invitation.body.id, email: invited.email, role: "member", seat: false, path: `/businesses/${businessId}/invitations` } });
    expect(receiver.at("/business")[0].headers["webhook-id"]).toMatch(/^msg_/);

    // Accepting (the invitee's email verified first) sends "accepted" and "joined".
    const { auth } = await testDeps();
    await auth.updateUser(invited.uid, { emailVerified: true });
    const token = new URL(invitation.body.acceptUrl).pathname.split("/").at(-1);
    const accepted = await request(app).post(`${api}/invitations/accept`).set(bearer({ ...invited, idToken: await (await import("./support/harness")).signIn(invited.email, invited.password) })).send({ token });
    expect(accepted.status).toBe(200);
    await within5s(() => expect(receiver.at("/business")).toHaveLength(3));
    expect(verified(endpoint.secret, receiver.at("/business")).map((message) => message.type).sort()).toEqual(["business.invitation.accepted", "business.invitation.created", "business.member.joined"]);

    // A change that fails sends nothing: inviting a member again is 409.
    expectProblem(await request(app).post(`${api}/businesses/${businessId}/invitations`).set(bearer(owner)).send({ email: invited.email }), 409, "already_member");
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(receiver.at("/business")).toHaveLength(3);
  });

  it("a publisher's endpoint gets its own modules' versions and reviews, and another publisher's gets none of them", async () => {
    const create = (who: TestDeveloper, path: string) => request(app).post(`${api}/developers/webhooks`).set(bearer(who)).send({ url: `${receiver.origin}${path}`, events: ["*"] });
    const mine = (await create(developer, "/publisher")).body as { secret: string };
    const other = await createDeveloper("bystander");
    expect((await create(other, "/bystander")).status).toBe(201);
    await publishModule(developer, { id: "hooked.charts", version: "1.0.0" });
    await within5s(() => expect(receiver.at("/publisher")).toHaveLength(2));
    const messages = verified(mine.secret, receiver.at("/publisher"));
    expect(messages.map((message) => message.type).sort()).toEqual(["module.version.published", "module.version.signed"]);
    expect(messages.find((message) => message.type === "module.version.published")!.data).toEqual({ moduleId: "hooked.charts", version: "1.0.0", sha256: expect.any(String), path: "/modules/hooked.charts" });

    const reviewer = await createUser();
    expect((await request(app).post(`${api}/modules/confirm`).set(bearer(reviewer)).send({ moduleId: "hooked.charts" })).status).toBe(200);
    expect((await request(app).put(`${api}/modules/hooked.charts/reviews/me`).set(bearer(reviewer)).send({ rating: 5 })).status).toBe(200);
    await within5s(() => expect(receiver.at("/publisher")).toHaveLength(3));
    expect(verified(mine.secret, receiver.at("/publisher")).at(-1)).toMatchObject({ type: "module.review.created", data: { moduleId: "hooked.charts", rating: 5 } });
    expect(receiver.at("/bystander")).toEqual([]);

    // An access token (mpt_) is not enough to manage webhooks; event types of another kind of owner are refused.
    expectProblem(await request(app).post(`${api}/developers/webhooks`).set(bearer(developer)).send({ url: `${receiver.origin}/x`, events: ["release.published"] }), 400, "invalid_request");
    expectProblem(await request(app).post(`${api}/developers/webhooks`).set(bearer(developer)).send({ url: `${receiver.origin}/x`, events: ["no.such.type"] }), 400, "invalid_request");
    expectProblem(await request(app).get(`${api}/developers/webhooks/${(await create(other, "/b2")).body.id}`).set(bearer(developer)), 404, "webhook_not_found");
  });

  it("reaches an allowed localhost receiver whatever the DNS servers answer for localhost (RFC 6761: loopback, never asked)", async () => {
    const url = `${receiver.origin.replace("127.0.0.1", "localhost")}/on-localhost`;
    const created = await request(app).post(`${api}/businesses/${businessId}/webhooks`).set(bearer(owner)).send({ url, events: ["*"] });
    expect(created.status).toBe(201);
    expect((await request(app).post(`${api}/businesses/${businessId}/webhooks/${created.body.id}/test`).set(bearer(owner))).status).toBeLessThan(300);
    await within5s(() => expect(verified(created.body.secret, receiver.at("/on-localhost")).map((message) => message.type)).toEqual(["webhook.test"]));
  });

  it("the operators' endpoint hears a rollout halted", async () => {
    const endpoint = await createWebhook(deps, OPERATORS, { kind: "operator", id: "test" }, null, { url: `${receiver.origin}/operators`, events: ["release.halted", "release.published"] });
    await publishRelease(deps, { version: "3.0.0", platform: "linux", arch: "x64", fileName: "Setup-3.0.0" }, { content: Readable.from([Buffer.from("installer")]), size: 9 });
    await setRollout(deps, { releaseId: "linux-x64-stable-3.0.0", percentage: 0 });
    await within5s(() => expect(receiver.at("/operators")).toHaveLength(2));
    expect(verified(endpoint.secret, receiver.at("/operators")).map((message) => message.type).sort()).toEqual(["release.halted", "release.published"]);
  });

  it("retries a failing receiver with the same webhook-id, and lists the attempts", async () => {
    const endpoint = await addBusinessEndpoint("/flaky", ["business.member.updated"]);
    receiver.answer("/flaky", 500, { status: 503, headers: { "Retry-After": "1" } });
    const member = await createUser();
    await request(app).post(`${api}/businesses/${businessId}/invitations`).set(bearer(owner)).send({ email: "x@example.test" });
    await putBusiness(businessId, { name: "Hooks Co", memberIds: [owner.uid, member.uid], roles: { [owner.uid]: "owner" } });
    expect((await request(app).patch(`${api}/businesses/${businessId}/members/${member.uid}`).set(bearer(owner)).send({ role: "admin" })).status).toBe(200);
    await eventually(async () => expect(receiver.at("/flaky")).toHaveLength(3), 10_000);
    const ids = receiver.at("/flaky").map((received) => received.headers["webhook-id"]);
    expect(new Set(ids).size).toBe(1);
    verified(endpoint.secret, receiver.at("/flaky"));
    const deliveries = await request(app).get(`${api}/businesses/${businessId}/webhooks/${endpoint.id}/deliveries`).set(bearer(owner));
    await eventually(async () => {
      const listed = (await request(app).get(`${api}/businesses/${businessId}/webhooks/${endpoint.id}/deliveries`).set(bearer(owner))).body.items[0];
      expect(listed).toMatchObject({ id: ids[0], type: "business.member.updated", status: "succeeded", nextAttemptAt: null });
      expect(listed.attempts.map((attempt: { statusCode: number }) => attempt.statusCode)).toEqual([500, 503, 200]);
    }, 5_000);
    expect(deliveries.status).toBe(200);
    // The 503's Retry-After (1 s) was longer than the schedule's 0.2 s, and was honoured.
    const [, second, third] = receiver.at("/flaky").map((received) => Number(received.headers["webhook-timestamp"]));
    expect(third - second).toBeGreaterThanOrEqual(1);

    // Redelivery sends the same message again, with the same webhook-id.
    expect((await request(app).post(`${api}/businesses/${businessId}/webhooks/${endpoint.id}/deliveries/${ids[0]}/redeliver`).set(bearer(owner))).status).toBe(202);
    await within5s(() => expect(receiver.at("/flaky")).toHaveLength(4));
    expect(receiver.at("/flaky")[3].headers["webhook-id"]).toBe(ids[0]);
    expectProblem(await request(app).post(`${api}/businesses/${businessId}/webhooks/${endpoint.id}/deliveries/msg_nothing/redeliver`).set(bearer(owner)), 404, "message_not_found");
  });

  it("a 410 disables the endpoint; enabling it again and recovering sends what failed", async () => {
    const endpoint = await addBusinessEndpoint("/gone", ["webhook.test"]);
    receiver.answer("/gone", 410);
    expect((await request(app).post(`${api}/businesses/${businessId}/webhooks/${endpoint.id}/test`).set(bearer(owner))).status).toBe(202);
    await eventually(async () => expect((await request(app).get(`${api}/businesses/${businessId}/webhooks/${endpoint.id}`).set(bearer(owner))).body).toMatchObject({ disabled: true, disabledReason: "The endpoint answered 410 Gone." }), 5_000);
    expect(receiver.at("/gone")).toHaveLength(1);
    const since = new Date(Date.now() - 60_000).toISOString();
    expect((await request(app).patch(`${api}/businesses/${businessId}/webhooks/${endpoint.id}`).set(bearer(owner)).send({ disabled: false })).body).toMatchObject({ disabled: false, disabledReason: null });
    expect((await request(app).post(`${api}/businesses/${businessId}/webhooks/${endpoint.id}/recover`).set(bearer(owner)).send({ since })).status).toBe(202);
    await within5s(() => expect(receiver.at("/gone")).toHaveLength(2));
    expect(body(receiver.at("/gone")[1]).type).toBe("webhook.test");
  });

  it("an endpoint whose every attempt has failed for 5 days is disabled, and whoever made it is emailed", async () => {
    const endpoint = await addBusinessEndpoint("/dying", ["webhook.test"]);
    const { db } = deps;
    await db.collection("webhookEndpoints").doc(endpoint.id).update({ failingSince: new Date(Date.now() - 5 * 86_400_000 - 60_000) });
    receiver.answer("/dying", 500);
    expect((await request(app).post(`${api}/businesses/${businessId}/webhooks/${endpoint.id}/test`).set(bearer(owner))).status).toBe(202);
    await eventually(async () => expect((await request(app).get(`${api}/businesses/${businessId}/webhooks/${endpoint.id}`).set(bearer(owner))).body).toMatchObject({ disabled: true, disabledReason: "Every attempt failed for 5 days." }), 5_000);
    const mail = await db.collection("mail").where("to", "==", owner.email).get();
    expect(mail.docs.map((doc) => doc.get("message.subject"))).toContain("A webhook endpoint was disabled");
  });

  it("after a rotation both secrets sign for 24 h", async () => {
    const endpoint = await addBusinessEndpoint("/rotated", ["webhook.test"]);
    const rotated = await request(app).post(`${api}/businesses/${businessId}/webhooks/${endpoint.id}/rotate-secret`).set(bearer(owner));
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(endpoint.secret);
    await request(app).post(`${api}/businesses/${businessId}/webhooks/${endpoint.id}/test`).set(bearer(owner));
    await within5s(() => expect(receiver.at("/rotated")).toHaveLength(1));
    const [delivered] = receiver.at("/rotated");
    expect(String(delivered.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    for (const secret of [endpoint.secret, rotated.body.secret]) expect(verified(secret, [delivered])[0].type).toBe("webhook.test");
    expect(() => verified(`whsec_${Buffer.alloc(32, 7).toString("base64")}`, [delivered])).toThrow();
  });

  it("refuses private, loopback, link-local and metadata addresses in every spelling, http, credentials and long URLs", async () => {
    const refused = [
      "http://example.com/hook",
      "https://user:secret@example.com/hook",
      "https://127.1/hook",
      "https://2130706433/hook",
      "https://0x7f.0.0.1/hook",
      "https://017700000001/hook",
      "https://[::1]/hook",
      "https://[::ffff:127.0.0.1]/hook",
      "https://[::ffff:7f00:1]/hook",
      "https://[64:ff9b::a9fe:a9fe]/hook",
      "https://169.254.169.254/latest/meta-data",
      "https://[fe80::1]/hook",
      "https://[fc00::1]/hook",
      "https://10.0.0.1/hook",
      "https://172.16.5.4/hook",
      "https://192.168.0.1/hook",
      "https://100.64.0.1/hook",
      "https://0.0.0.0/hook",
      "https://198.18.0.1/hook",
      "https://240.0.0.1/hook",
      "https://224.0.0.1/hook",
      "https://intranet/hook",
      `https://example.com/${"a".repeat(2_000)}`,
      `https://example.com/${"a".repeat(20_000)}`,
      "not a url",
      "https://[::7f00:1]/hook",
      "https://[::a9fe:a9fe]/hook",
      "https://[::c0a8:101]/hook",
    ];
    for (const url of refused) {
      const response = await request(app).post(`${api}/businesses/${businessId}/webhooks`).set(bearer(owner)).send({ url, events: ["*"] });
      expect([url.slice(0, 60), response.status, response.body.code]).toEqual([url.slice(0, 60), 400, "invalid_webhook_url"]);
    }
    // localhost is loopback: refused unless WEBHOOK_ALLOWED_HOSTS names it (this file's instance does, for the receiver).
    const strict = createApp({ ...deps, config: { ...deps.config, webhooks: { ...deps.config.webhooks, allowedHosts: ["127.0.0.1"] } } });
    expectProblem(await request(strict).post(`${api}/businesses/${businessId}/webhooks`).set(bearer(owner)).send({ url: "https://localhost/hook", events: ["*"] }), 400, "invalid_webhook_url");
    // The exemption is for the host as written: another spelling of 127.0.0.1 is not exempt.
    expectProblem(await request(app).post(`${api}/businesses/${businessId}/webhooks`).set(bearer(owner)).send({ url: receiver.origin.replace("127.0.0.1", "127.000.000.001"), events: ["*"] }), 400, "invalid_webhook_url");
  });

  it("30 concurrent changes give exactly 30 messages, each once", async () => {
    const endpoint = await addBusinessEndpoint("/burst", ["business.invitation.created"]);
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => request(app).post(`${api}/businesses/${businessId}/invitations`).set(bearer(owner)).send({ email: `burst${i}@example.test`, seat: false })));
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 201));
    await eventually(async () => expect(receiver.at("/burst")).toHaveLength(30), 10_000);
    const messages = verified(endpoint.secret, receiver.at("/burst"));
    expect(new Set(receiver.at("/burst").map((received) => received.headers["webhook-id"])).size).toBe(30);
    expect(new Set(messages.map((message) => message.data.email)).size).toBe(30);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(receiver.at("/burst")).toHaveLength(30);
  });

  it("a receiver that holds every request sees at most 10 at once, whatever fires twice, and then every message once", async () => {
    // Cloud Functions fires a trigger at least once: a second listener fires every event again.
    const second = await runDeployedFunctions((await otherInstanceDeps()).db, { triggers: ["webhookEvents"], schedules: { webhookSweep: 500 }, warn: deps.logger.warn });
    const holding = receiver.hold("/held");
    try {
      // A business of its own: the other tests' invitations count against the first one's daily limit.
      const heldId = `held-${owner.uid}`.toLowerCase();
      await putBusiness(heldId, { name: "Held Co", memberIds: [owner.uid], roles: { [owner.uid]: "owner" } });
      const created = await request(app).post(`${api}/businesses/${heldId}/webhooks`).set(bearer(owner)).send({ url: `${receiver.origin}/held`, events: ["business.invitation.created"] });
      expect(created.status).toBe(201);
      const endpoint = created.body as { secret: string };
      const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => request(app).post(`${api}/businesses/${heldId}/invitations`).set(bearer(owner)).send({ email: `held${i}@example.test`, seat: false })));
      expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 201));
      // Thirty invitations to one business take turns (§1), and twenty deliveries wait for slots:
      // slow on a loaded machine (CI runs this file at a fifth of its speed), so the bounds are generous.
      await eventually(async () => expect(holding.open()).toBe(10), 15_000);
      // Both listeners' triggers and sweeps keep trying meanwhile: none gets past the ten slots.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      expect(holding.mostOpen()).toBe(10);
      holding.release();
      // Generous for a loaded CI machine (sweeps that piled up once kept one event from being fanned
      // out for a minute); should one miss the bound, the failure names each undelivered message's
      // state and attempts, and how many deliveries there are, so it explains itself.
      const delivered = () => new Set(receiver.at("/held").map((received) => String(received.headers["webhook-id"])));
      await eventually(async () => expect(delivered().size).toBe(30), 45_000).catch(async (error: unknown) => {
        const { db } = await testDeps();
        const deliveries = await db.collection("webhookDeliveries").where("endpointId", "==", (created.body as { id: string }).id).get();
        const undelivered = deliveries.docs.filter((doc) => !delivered().has(String(doc.get("messageId")))).map((doc) => ({ id: doc.id, status: doc.get("status"), attempts: doc.get("attempts"), nextAttemptAt: doc.get("nextAttemptAt")?.toDate?.(), leaseUntil: doc.get("leaseUntil")?.toDate?.() }));
        throw new Error(`${(error as Error).message}\n${deliveries.size} deliveries; undelivered at ${new Date().toISOString()}: ${JSON.stringify(undelivered)}`);
      });
      expect(new Set(verified(endpoint.secret, receiver.at("/held")).map((message) => message.data.email)).size).toBe(30);
      expect(holding.mostOpen()).toBe(10);
    } finally {
      // Stopping waits for deliveries under way: what is held is answered first, so a failure above shows as itself.
      holding.release();
      await second.stop();
    }
  }, 120_000);

  it("one endpoint's receiver holding every request while 250 changes queue for it delays no other endpoint's message", async () => {
    // Two businesses of their own: one endpoint that stalls, one that answers.
    const stalledId = `stalled-${owner.uid}`.toLowerCase();
    const healthyId = `healthy-${owner.uid}`.toLowerCase();
    for (const id of [stalledId, healthyId]) await putBusiness(id, { name: id, memberIds: [owner.uid], roles: { [owner.uid]: "owner" } });
    const add = (id: string, path: string) => addBusinessEndpoint(path, ["business.invitation.created", "webhook.test"], id);
    const healthy = await add(healthyId, "/healthy");
    expect((await request(app).post(`${api}/businesses/${healthyId}/webhooks/${healthy.id}/test`).set(bearer(owner))).status).toBe(202);
    await within5s(() => expect(receiver.at("/healthy")).toHaveLength(1));
    const messageId = String(receiver.at("/healthy")[0].headers["webhook-id"]);
    await add(stalledId, "/stalled");
    const holding = receiver.hold("/stalled");
    try {
      // 250 changes, each committed with its event as every service commits one: more than the 200
      // due deliveries a sweep once read in all, every one of them the stalled endpoint's.
      const owners = [{ kind: "business" as const, id: stalledId }];
      await Promise.all(
        Array.from({ length: 250 }, (_, index) =>
          auditLog(deps.db).commit(systemActor("test"), { action: "test.stall", target: stalledId, details: {}, emits: [outboundEvent("business.invitation.created", owners, { businessId: stalledId, id: `inv-${index}`, email: `s${index}@example.test`, role: "member", seat: false, path: `/businesses/${stalledId}/invitations` })] }, new Date(), () => undefined),
        ),
      );
      await eventually(async () => expect(holding.open()).toBe(10), 15_000);
      // The healthy endpoint's redelivery is the sweep's alone to send, behind 240 of the stalled one's due.
      expect((await request(app).post(`${api}/businesses/${healthyId}/webhooks/${healthy.id}/deliveries/${messageId}/redeliver`).set(bearer(owner))).status).toBe(202);
      await within5s(() => expect(receiver.at("/healthy")).toHaveLength(2));
      expect(receiver.at("/healthy")[1].headers["webhook-id"]).toBe(messageId);
      expect(holding.mostOpen()).toBe(10);
    } finally {
      holding.release();
    }
    // Released, every change reaches the stalled endpoint, each once.
    await eventually(async () => expect(new Set(receiver.at("/stalled").map((received) => received.headers["webhook-id"])).size).toBe(250), 60_000);
    expect(holding.mostOpen()).toBe(10);
  }, 120_000);

  it("takes an attempt's record only while its claim holds: a record after its lease was taken over changes nothing", async () => {
    const endpoint = await addBusinessEndpoint("/late", ["webhook.test"]);
    const holding = receiver.hold("/late");
    // A delivery an hour ahead, attempted with clocks an hour ahead: no sweep of this file finds it due.
    const future = Date.now() + 3_600_000;
    const at = (ms: number): Deps => ({ ...deps, clock: () => new Date(future + ms) });
    const messageId = "msg_lateRecord";
    const id = deliveryId(messageId, endpoint.id);
    await deps.db.runTransaction(async (tx) =>
      deliveryStore(deps.db).create(tx, { endpointId: endpoint.id, messageId, type: "webhook.test", payload: '{"type":"webhook.test","data":{}}', createdAt: new Date(future), status: "pending", attempts: [], nextAttemptAt: new Date(future), leaseUntil: null }),
    );
    try {
      const first = attemptDelivery(at(0), id);
      await eventually(async () => expect(holding.open()).toBe(1), 5_000);
      // 61 s later by the clock the first attempt's lease (60 s) has ended: a second attempt claims the delivery.
      const second = attemptDelivery(at(61_000), id);
      await eventually(async () => expect(holding.open()).toBe(2), 5_000);
      holding.release();
      expect(await second).toEqual({ status: "succeeded" });
      expect(await first).toBeNull();
    } finally {
      holding.release();
    }
    const stored = await deliveryStore(deps.db).get(id);
    expect(stored).toMatchObject({ status: "succeeded", claim: null, nextAttemptAt: null });
    expect(stored!.attempts).toHaveLength(1);
    // Each attempt gave back the slot it held, and no other.
    expect((await deps.db.collection(`webhookEndpoints/${endpoint.id}/inFlight`).get()).size).toBe(0);
  });

  it("recover queues any number of failed messages without reading them in the request, and the sweep sends each once", async () => {
    const recoveringId = `recovering-${owner.uid}`.toLowerCase();
    await putBusiness(recoveringId, { name: "Recovering Co", memberIds: [owner.uid], roles: { [owner.uid]: "owner" } });
    const { id: endpointId } = await addBusinessEndpoint("/recovered", ["webhook.test"], recoveringId);
    // 450 messages that failed an hour ago (more than two of the sweep's pages of 200), and one from before `since`.
    const hourAgo = new Date(Date.now() - 3_600_000);
    const failed = (index: number, createdAt: Date) => ({ endpointId, messageId: `msg_recover${String(index).padStart(4, "0")}`, type: "webhook.test", payload: `{"type":"webhook.test","data":{"n":${index}}}`, createdAt, status: "failed" as const, attempts: [], nextAttemptAt: null, leaseUntil: null });
    for (let start = 0; start < 450; start += 150) {
      await deps.db.runTransaction(async (tx) => {
        for (let index = start; index < start + 150; index += 1) deliveryStore(deps.db).create(tx, failed(index, new Date(hourAgo.getTime() + index)));
      });
    }
    await deps.db.runTransaction(async (tx) => deliveryStore(deps.db).create(tx, failed(9_999, new Date(hourAgo.getTime() - 3_600_000))));
    const recovered = await request(app).post(`${api}/businesses/${recoveringId}/webhooks/${endpointId}/recover`).set(bearer(owner)).send({ since: hourAgo.toISOString() });
    expect(recovered.status).toBe(202);
    const ids = () => new Set(receiver.at("/recovered").map((received) => String(received.headers["webhook-id"])));
    await eventually(async () => expect(ids().size).toBe(450), 60_000);
    expect(receiver.at("/recovered")).toHaveLength(450);
    expect(ids().has("msg_recover9999")).toBe(false);
    // Done: the recovery is gone.
    expect((await deps.db.collection("webhookRecoveries").where("endpointId", "==", endpointId).get()).size).toBe(0);
  }, 90_000);

  it("holds at most 20 endpoints per owner, and answers 404 for another owner's", async () => {
    const shop = await createUser();
    const shopId = `shop-${shop.uid}`.toLowerCase();
    await putBusiness(shopId, { name: "Shop", memberIds: [shop.uid], roles: { [shop.uid]: "owner" } });
    for (let i = 0; i < 20; i += 1) expect((await request(app).post(`${api}/businesses/${shopId}/webhooks`).set(bearer(shop)).send({ url: `${receiver.origin}/shop${i}`, events: ["*"] })).status).toBe(201);
    expectProblem(await request(app).post(`${api}/businesses/${shopId}/webhooks`).set(bearer(shop)).send({ url: `${receiver.origin}/shop20`, events: ["*"] }), 409, "too_many_webhooks");
    const theirs = (await request(app).get(`${api}/businesses/${shopId}/webhooks`).set(bearer(shop))).body.items[0].id as string;
    expectProblem(await request(app).get(`${api}/businesses/${businessId}/webhooks/${theirs}`).set(bearer(owner)), 404, "webhook_not_found");
    expectProblem(await request(app).delete(`${api}/businesses/${businessId}/webhooks/${theirs}`).set(bearer(owner)), 404, "webhook_not_found");
    expectProblem(await request(app).get(`${api}/businesses/${shopId}/webhooks`).set(bearer(owner)), 404, "business_not_found");
    expect((await request(app).delete(`${api}/businesses/${shopId}/webhooks/${theirs}`).set(bearer(shop))).status).toBe(204);
  });
});
