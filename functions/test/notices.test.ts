import type { Express } from "express";
import request from "supertest";
import { listNotices, setTrustedFlagger, showNotice } from "../src/notices/service";
import { setReviewHidden } from "../src/reviews/service";
import { admin, json } from "./support/admin";
import { countDocuments, putBusiness } from "./support/fixtures";
import { bearer, createDeveloper, createUser, expectProblem, operatorDeps, publishModule, resetEmulators, signIn, testApp, testDeps, type TestDeveloper, type TestUser } from "./support/harness";

const api = "/api/v1";

/** Contract §30, notices (the DSA's Art. 16): anyone reports a module, a version or a review; nothing is enumerated through them. */
describe("notices (§30)", () => {
  let app: Express;
  let developer: TestDeveloper;
  let reviewer: TestUser;
  let reviewId: string;

  const notice = (body: Record<string, unknown>, who?: TestUser) => {
    const call = request(app).post(`${api}/notices`);
    return (who ? call.set(bearer(who)) : call).send(body);
  };
  const explanation = "This module sends every file it can read to a server abroad.";
  const mailTo = async (email: string) => {
    const { db } = await testDeps();
    return (await db.collection("mail").where("to", "==", email).get()).docs.map((doc) => doc.get("message.subject") as string);
  };

  beforeAll(async () => {
    await resetEmulators();
    app = await testApp({ config: { rateLimit: { perIpPerMinute: 1_000_000, perUserPerMinute: 1_000_000 } } });
    developer = await createDeveloper("acme");
    await publishModule(developer, { id: "acme.charts", name: "Charts", summary: "Charts.", version: "1.0.0" });
    reviewer = await createUser({ displayName: "Rita" });
    expect((await request(app).post(`${api}/modules/confirm`).set(bearer(reviewer)).send({ moduleId: "acme.charts" })).status).toBe(200);
    reviewId = (await request(app).put(`${api}/modules/acme.charts/reviews/me`).set(bearer(reviewer)).send({ rating: 1, title: "Scam", body: "Buy my course at scam.example" })).body.id;
  });

  it("takes a notice without an account, confirms it to the reporter's email, and queues it for the operators", async () => {
    const sent = await notice({ target: { moduleId: "acme.charts", version: "1.0.0" }, category: "malware", explanation: `<script>alert(1)</script> ${explanation}`, reporter: { name: "Ana", email: "ana@example.test" }, goodFaith: true });
    expect(sent.status).toBe(201);
    expect(sent.body).toEqual({ id: expect.stringMatching(/^ntc_/), receivedAt: expect.any(String), appealToken: expect.stringMatching(/^nap_[0-9A-Za-z]{40}$/) });
    expect(await mailTo("ana@example.test")).toEqual([`Your notice ${sent.body.id} was received`]);
    const operator = await operatorDeps();
    expect(await showNotice(operator, sent.body.id)).toEqual({
      id: sent.body.id,
      status: "open",
      source: "anonymous",
      category: "malware",
      target: { moduleId: "acme.charts", version: "1.0.0" },
      // Kept as typed: shown as text wherever it is shown.
      explanation: `<script>alert(1)</script> ${explanation}`,
      reporter: { name: "Ana", email: "ana@example.test", uid: null },
      receivedAt: sent.body.receivedAt,
      decisionId: null,
    });
    const { db } = await testDeps();
    const entry = (await db.collection("auditLog").where("action", "==", "notice.receive").get()).docs.map((doc) => doc.data());
    expect(entry).toEqual([expect.objectContaining({ actor: { kind: "anonymous", id: "anonymous" }, target: sent.body.id, details: expect.objectContaining({ moduleId: "acme.charts", source: "anonymous" }) })]);
    // The module's owner reads its entries: a notice, and who sent it, is not among them.
    const ownerAudit = await request(app).get(`${api}/developers/modules/acme.charts/audit`).set(bearer(developer));
    expect(ownerAudit.body.items.map((item: { action: string }) => item.action)).not.toContain("notice.receive");
    // A replay under its Idempotency-Key records nothing more and shows no appeal token again.
    const first = await request(app).post(`${api}/notices`).set("Idempotency-Key", "notice-1").send({ target: { moduleId: "acme.charts" }, category: "other", explanation, goodFaith: true });
    const again = await request(app).post(`${api}/notices`).set("Idempotency-Key", "notice-1").send({ target: { moduleId: "acme.charts" }, category: "other", explanation, goodFaith: true });
    expect(again.body).toEqual({ ...first.body, appealToken: null });
    expect(await countDocuments("notices")).toBe(2);
  });

  it("names a signed-in reporter by the account, and puts a trusted flagger's notice first in the queue", async () => {
    const { auth } = await testDeps();
    const member = await createUser({ displayName: "Mo" });
    const first = await notice({ target: { reviewId }, category: "scam_or_fraud", explanation, reporter: { name: "Someone Else", email: "else@example.test" }, goodFaith: true }, member);
    expect(first.status).toBe(201);
    const flagger = await createUser({ displayName: "Consumer Watch", email: "desk@watch.example" });
    await auth.updateUser(flagger.uid, { emailVerified: true });
    const operator = await operatorDeps();
    await setTrustedFlagger(operator, "Desk@Watch.example", true);
    // A trusted flagger's email typed into an anonymous notice names nobody.
    const pretending = await notice({ target: { moduleId: "acme.charts" }, category: "illegal_content", explanation, reporter: { name: "Desk", email: "desk@watch.example" }, goodFaith: true });
    const trusted = await notice({ target: { moduleId: "acme.charts" }, category: "illegal_content", explanation, goodFaith: true }, flagger);
    expect(trusted.status).toBe(201);
    const queue = await listNotices(operator, {});
    const sources = new Map(queue.map((item) => [item.id, item.source]));
    expect(sources.get(first.body.id)).toBe("signed_in");
    expect(sources.get(pretending.body.id)).toBe("anonymous");
    // The flagger's ID token was minted before the email was verified: it does not say so, so its notice is not first yet.
    expect(sources.get(trusted.body.id)).toBe("signed_in");
    const verifiedToken = await signIn(flagger.email, flagger.password);
    const trustedNow = await notice({ target: { moduleId: "acme.charts" }, category: "illegal_content", explanation, goodFaith: true }, { ...flagger, idToken: verifiedToken });
    expect((await listNotices(operator, {}))[0]).toMatchObject({ id: trustedNow.body.id, source: "trusted_flagger", reporter: { name: "Consumer Watch", email: "desk@watch.example" } });
    expect((await showNotice(operator, first.body.id)).reporter).toEqual({ name: "Mo", email: member.email, uid: member.uid });
  });

  it("answers a private module, a hidden review and a bad body exactly as an id never made, recording nothing", async () => {
    const before = await countDocuments("notices");
    const [owner, admin] = [await createDeveloper("olive"), await createDeveloper("adam")];
    await putBusiness("b1", { name: "Initech", memberIds: [owner.uid, admin.uid], roles: { [owner.uid]: "owner", [admin.uid]: "admin" } });
    expect((await request(app).post(`${api}/businesses/b1/publisher`).set(bearer(owner)).send({ publisherId: "initech" })).status).toBe(201);
    await publishModule(admin, { id: "initech.build", name: "Build", summary: "Internal.", version: "1.0.0" }, [], app);
    const outsider = await createUser();
    const body = (target: Record<string, unknown>) => ({ target, category: "other", explanation, goodFaith: true });
    const strip = (response: request.Response) => ({ status: response.status, body: { ...response.body, instance: undefined, requestId: undefined } });
    const neverMade = strip(await notice(body({ moduleId: "initech.nothing" }), outsider));
    expect(neverMade.status).toBe(404);
    const privateOne = strip(await notice(body({ moduleId: "initech.build" }), outsider));
    expect({ ...privateOne, body: { ...privateOne.body, detail: privateOne.body.detail.replace("initech.build", "initech.nothing") } }).toEqual(neverMade);
    expect((await notice(body({ moduleId: "initech.build" }), admin)).status).toBe(201);

    await setReviewHidden(await operatorDeps(), { moduleId: "acme.charts", reviewId, reason: "spam" }, true);
    const hidden = await notice(body({ reviewId }));
    const unknown = await notice(body({ reviewId: "rev_00000000000000000000" }));
    expectProblem(hidden, 404, "review_not_found");
    expect({ ...hidden.body, detail: hidden.body.detail.replace(reviewId, "X"), instance: undefined, requestId: undefined }).toEqual({ ...unknown.body, detail: unknown.body.detail.replace("rev_00000000000000000000", "X"), instance: undefined, requestId: undefined });
    await setReviewHidden(await operatorDeps(), { moduleId: "acme.charts", reviewId }, false);

    for (const bad of [
      { ...body({ moduleId: "acme.charts" }), explanation: "too short" },
      { ...body({ moduleId: "acme.charts" }), explanation: "x".repeat(5001) },
      { ...body({ moduleId: "acme.charts" }), goodFaith: false },
      { ...body({ moduleId: "acme.charts" }), category: "spam" },
      { ...body({ moduleId: "acme.charts" }), category: "intellectual_property" },
      { ...body({ moduleId: "acme.charts" }), category: "intellectual_property", reporter: { name: "Ana" } },
      { ...body({ moduleId: "acme.charts" }), reporter: { name: "Ana\u0000", email: "ana@example.test" } },
      { ...body({ moduleId: "acme.charts", reviewId }) },
      { ...body({ moduleId: "acme.charts" }), extra: true },
    ]) {
      expectProblem(await notice(bad), 400, "invalid_request");
    }
    expectProblem(await notice(body({ moduleId: "acme.charts", version: "9.9.9" })), 404, "module_not_found");
    expect(await countDocuments("notices")).toBe(before + 1);
  });

  it("are the operators' through the CLI: the queue, one notice, trusted flaggers, a publisher's trader declaration", async () => {
    const sent = await notice({ target: { moduleId: "acme.charts" }, category: "privacy", explanation, goodFaith: true });
    const queue = await json("notices", "list", "--limit", "500");
    expect(queue.map((item: { id: string }) => item.id)).toContain(sent.body.id);
    expect(await json("notices", "show", sent.body.id)).toMatchObject({ id: sent.body.id, category: "privacy", source: "anonymous" });
    expect(await json("notices", "list", "--status", "decided")).toEqual([]);
    const bad = await admin("notices", "list", "--status", "closed");
    expect(bad.code).not.toBe(0);
    expect(await json("--actor", "ops@example.test", "flaggers", "add", "Hotline@Example.test")).toEqual({ email: "hotline@example.test", trusted: true });
    expect(await json("flaggers", "list")).toContainEqual(expect.objectContaining({ email: "hotline@example.test", addedBy: "ops@example.test" }));
    expect(await json("flaggers", "remove", "hotline@example.test")).toEqual({ email: "hotline@example.test", trusted: false });
    expect((await json("flaggers", "list")).map((flagger: { email: string }) => flagger.email)).not.toContain("hotline@example.test");

    const missing = await admin("trader", "show", "acme");
    expect({ code: missing.code, stderr: missing.stderr }).toEqual({ code: 1, stderr: expect.stringContaining("has not declared whether it sells as a trader") });
    expect((await request(app).put(`${api}/developers/trader`).set(bearer(developer)).send({ trader: false })).status).toBe(200);
    expect(await json("trader", "show", "acme")).toEqual({ trader: false, publisherId: "acme", updatedAt: expect.any(String), declaredBy: developer.uid });
  });
});
