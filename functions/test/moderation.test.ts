import type { Express } from "express";
import request from "supertest";
import { decideNotice } from "../src/moderation/service";
import { admin, json } from "./support/admin";
import { modulePackage } from "./support/packages";
import { bearer, createDeveloper, createUser, eventually, expectProblem, operatorDeps, publishModule, resetEmulators, signRequest, testApp, testDeps, type TestDeveloper, type TestUser } from "./support/harness";

const api = "/api/v1";
const explanation = "This module sends every file it can read to a server abroad.";
const today = () => new Date().toISOString().slice(0, 10);

/**
 * Contract §30, decisions and appeals (the DSA's Art. 17, 20, 24): an operator decides a notice
 * from the CLI; the decision takes effect with its statement of reasons to both sides; the side it
 * affects, or the reporter, appeals; another operator decides the appeal, and a reversal undoes
 * the effect; the transparency figures count exactly what happened.
 */
describe("decisions and appeals (§30)", () => {
  let app: Express;
  let publisher: TestDeveloper;
  let reviewer: TestUser;

  const sendNotice = async (target: Record<string, unknown>, category = "malware", reporter: Record<string, unknown> | undefined = { name: "Ana", email: "ana@example.test" }) => {
    const sent = await request(app).post(`${api}/notices`).send({ target, category, explanation, ...(reporter ? { reporter } : {}), goodFaith: true });
    expect(sent.status).toBe(201);
    return sent.body as { id: string; appealToken: string };
  };
  const decide = (noticeId: string, decision: string, operator = "first@ops.example", extra: string[] = []) =>
    json("notices", "decide", noticeId, "--decision", decision, "--ground", "terms", "--reference", "Terms §4.2 (malware)", "--facts", "The package uploads files to a host abroad.", "--operator", operator, ...extra);
  const mailTo = async (email: string) => {
    const { db } = await testDeps();
    return (await db.collection("mail").where("to", "==", email).get()).docs.map((doc) => ({ subject: doc.get("message.subject") as string, text: doc.get("message.text") as string }));
  };
  const listed = async (query: string) => (await request(app).get(`${api}/modules?q=${query}`)).body.items.map((item: { id: string }) => item.id);
  const decisionsOf = async (who: TestUser, path = "/developers/decisions") => {
    const answer = await request(app).get(`${api}${path}`).set(bearer(who));
    expect(answer.status).toBe(200);
    return answer.body.items as Record<string, unknown>[];
  };

  beforeAll(async () => {
    await resetEmulators();
    app = await testApp({ config: { rateLimit: { perIpPerMinute: 1_000_000, perUserPerMinute: 1_000_000 } } });
    publisher = await createDeveloper("shady");
    await publishModule(publisher, { id: "shady.sync", name: "Sync", summary: "Syncs files.", version: "1.0.0" });
    await publishModule(publisher, { id: "shady.notes", name: "Notes", summary: "Takes notes.", version: "1.0.0" });
    reviewer = await createUser({ displayName: "Rita", email: "rita@example.test" });
    expect((await request(app).post(`${api}/modules/confirm`).set(bearer(reviewer)).send({ moduleId: "shady.notes" })).status).toBe(200);
  });

  it("removes a version, tells both sides why, and lifts it again when another operator reverses the publisher's appeal", async () => {
    const notice = await sendNotice({ moduleId: "shady.sync", version: "1.0.0" });
    const decided = await decide(notice.id, "remove");
    expect(decided).toMatchObject({ noticeId: notice.id, target: { moduleId: "shady.sync", version: "1.0.0" }, decision: "remove", ground: "terms", automated: false, reversed: false, appeal: null });
    expectProblem(await request(app).get(`${api}/modules/download/shady.sync?version=1.0.0`).set(bearer(reviewer)), 410, "module_revoked");
    expect(await json("notices", "show", notice.id)).toMatchObject({ status: "decided", decisionId: decided.id });

    // The statement of reasons reaches the publisher and the reporter; the publisher's never names the reporter.
    const [toPublisher] = await mailTo(publisher.email);
    expect(toPublisher.subject).toBe(`Decision ${decided.id} on shady.sync 1.0.0`);
    expect(toPublisher.text).toContain("The package uploads files to a host abroad.");
    expect(toPublisher.text).toContain("Terms §4.2 (malware)");
    expect(toPublisher.text).not.toMatch(/Ana|ana@example/);
    expect((await mailTo("ana@example.test")).map((mail) => mail.subject)).toContain(`Decision on your notice ${notice.id}`);
    const { db } = await testDeps();
    const events = (await db.collection("events").get()).docs.map((doc) => doc.data()).filter((event) => event.type === "moderation.decided");
    expect(events).toEqual([expect.objectContaining({ data: expect.objectContaining({ decisionId: decided.id, decision: "remove", reversed: false }) })]);

    const [listedDecision] = await decisionsOf(publisher);
    expect(listedDecision).toEqual({ ...decided, appeal: null });
    expect(JSON.stringify(listedDecision)).not.toMatch(/Ana|ana@example/);

    // The publisher appeals once; a second appeal of the same side is refused.
    const appeal = await request(app).post(`${api}/decisions/${decided.id}/appeals`).set(bearer(publisher)).send({ explanation: "The upload is the sync the module is for, documented in its README." });
    expect(appeal.status).toBe(201);
    const appealEvents = (await db.collection("events").get()).docs.map((doc) => doc.data()).filter((event) => event.type === "moderation.appeal.received");
    expect(appealEvents).toEqual([expect.objectContaining({ data: { appealId: appeal.body.id, decisionId: decided.id, side: "affected" } })]);
    expectProblem(await request(app).post(`${api}/decisions/${decided.id}/appeals`).set(bearer(publisher)).send({ explanation: "Once more, with feeling: please look again." }), 409, "appeal_exists");
    expect(await json("appeals", "list")).toEqual([expect.objectContaining({ id: appeal.body.id, decisionId: decided.id, side: "affected", status: "open" })]);

    // The operator who decided may not hear the appeal: exit 1, nothing changed.
    const refused = await admin("appeals", "decide", appeal.body.id, "--outcome", "reversed", "--reasons", "Looked again.", "--operator", "First@Ops.example");
    expect({ code: refused.code, stderr: refused.stderr }).toEqual({ code: 1, stderr: expect.stringContaining("another operator decides its appeal") });
    expect((await json("appeals", "list")).map((item: { status: string }) => item.status)).toEqual(["open"]);

    const reversed = await json("appeals", "decide", appeal.body.id, "--outcome", "reversed", "--reasons", "The upload is the documented sync; no breach.", "--operator", "second@ops.example");
    expect(reversed).toMatchObject({ status: "reversed", decidedBy: "second@ops.example" });
    expect((await request(app).get(`${api}/modules/download/shady.sync?version=1.0.0`).set(bearer(reviewer))).status).toBe(200);
    expect((await decisionsOf(publisher))[0]).toMatchObject({ id: decided.id, reversed: true, appeal: { id: appeal.body.id, status: "reversed", reasons: "The upload is the documented sync; no breach." } });
    // Both sides are told.
    expect((await mailTo(publisher.email)).map((mail) => mail.subject)).toContain(`Appeal ${appeal.body.id} on decision ${decided.id}: reversed`);
    expect((await mailTo("ana@example.test")).map((mail) => mail.subject)).toContain(`Appeal ${appeal.body.id} on decision ${decided.id}: reversed`);
    expect(await admin("appeals", "decide", appeal.body.id, "--outcome", "upheld", "--reasons", "Again.", "--operator", "third@ops.example")).toMatchObject({ code: 1 });
  });

  it("restricts a module out of search with its page kept, and suspends a publisher out of every list and out of signing and publishing", async () => {
    expect(await listed("notes")).toContain("shady.notes");
    const restricted = await decide((await sendNotice({ moduleId: "shady.notes" }, "scam_or_fraud", undefined)).id, "restrict_visibility");
    await eventually(async () => expect(await listed("notes")).not.toContain("shady.notes"));
    expect((await request(app).get(`${api}/modules/shady.notes`)).status).toBe(200);
    await eventually(async () => expect(await listed("sync")).toContain("shady.sync"));

    const suspended = await decide((await sendNotice({ moduleId: "shady.sync" }, "scam_or_fraud")).id, "suspend_publisher");
    await eventually(async () => expect(await listed("sync")).not.toContain("shady.sync"));
    expect((await request(app).get(`${api}/modules/shady.sync`)).status).toBe(200);
    expectProblem(await signRequest(app, publisher, await modulePackage({ id: "shady.sync", name: "Sync", summary: "Syncs files.", version: "1.1.0" })), 403, "publisher_suspended");
    expectProblem(await request(app).post(`${api}/developers/modules/publish`).set(bearer(publisher)).send({ moduleId: "shady.sync", version: "1.0.0" }), 403, "publisher_suspended");

    // The reporter of the restriction sent no email: the publisher appeals the suspension, and a second operator reverses it.
    const appeal = await request(app).post(`${api}/decisions/${suspended.id}/appeals`).set(bearer(publisher)).send({ explanation: "We never took anyone's money; see our refund log." });
    expect(appeal.status).toBe(201);
    await json("appeals", "decide", appeal.body.id, "--outcome", "reversed", "--reasons", "The refunds show good faith.", "--operator", "second@ops.example");
    await eventually(async () => expect(await listed("sync")).toContain("shady.sync"));
    // The restriction of its own decision stands: a reversal lifts only what its decision did.
    expect(await listed("notes")).not.toContain("shady.notes");
    expect((await signRequest(app, publisher, await modulePackage({ id: "shady.sync", name: "Sync", summary: "Syncs files.", version: "1.1.0" }))).status).toBe(201);
    expect((await decisionsOf(publisher)).map((item) => [item.id, item.reversed])).toEqual(expect.arrayContaining([[restricted.id, false], [suspended.id, true]]));
    // Each decision's statement reached the publisher, and the reporter who gave an email; the reversal was told to both.
    expect((await mailTo(publisher.email)).map((mail) => mail.subject)).toEqual(expect.arrayContaining([`Decision ${restricted.id} on shady.notes`, `Decision ${suspended.id} on shady.sync`, `Appeal ${appeal.body.id} on decision ${suspended.id}: reversed`]));
    expect((await mailTo("ana@example.test")).map((mail) => mail.subject)).toEqual(expect.arrayContaining([`Appeal ${appeal.body.id} on decision ${suspended.id}: reversed`]));
  });

  it("removes a review: its author reads the reasons and appeals; decisions a review cannot take are refused", async () => {
    const reviewId = (await request(app).put(`${api}/modules/shady.notes/reviews/me`).set(bearer(reviewer)).send({ rating: 1, title: "Scam", body: "Buy my course at scam.example" })).body.id;
    const notice = await sendNotice({ reviewId }, "scam_or_fraud");
    const refused = await admin("notices", "decide", notice.id, "--decision", "suspend_publisher", "--ground", "terms", "--reference", "Terms §2", "--facts", "Spam.", "--operator", "first@ops.example");
    expect({ code: refused.code, stderr: refused.stderr }).toEqual({ code: 2, stderr: expect.stringContaining("restrict_visibility and suspend_publisher concern modules") });
    const removed = await decide(notice.id, "remove", "first@ops.example", ["--automated"]);
    expect(removed).toMatchObject({ target: { moduleId: "shady.notes", reviewId }, automated: true });
    expect((await request(app).get(`${api}/modules/shady.notes/reviews`)).body.items).toEqual([]);
    expect(await decisionsOf(reviewer, "/users/me/decisions")).toEqual([expect.objectContaining({ id: removed.id, decision: "remove" })]);
    expect(await decisionsOf(publisher).then((items) => items.map((item) => item.id))).not.toContain(removed.id);
    expect((await mailTo("rita@example.test")).map((mail) => mail.subject)).toEqual([`Decision ${removed.id} on a review of shady.notes`]);
    expect((await admin("notices", "decide", notice.id, "--decision", "no_action", "--ground", "terms", "--reference", "x", "--facts", "y", "--operator", "first@ops.example")).code).toBe(1);

    // Only the review's author, or the reporter with the appeal token, may appeal; anyone else is told no such decision exists.
    const neverMade = await request(app).post(`${api}/decisions/dec_00000000000000000000/appeals`).set(bearer(publisher)).send({ explanation: "I am not the one affected here." });
    expectProblem(neverMade, 404, "not_found");
    const stranger = await request(app).post(`${api}/decisions/${removed.id}/appeals`).set(bearer(publisher)).send({ explanation: "I am not the one affected here." });
    expect({ ...stranger.body, detail: stranger.body.detail.replace(removed.id, "X"), instance: undefined, requestId: undefined }).toEqual({ ...neverMade.body, detail: neverMade.body.detail.replace("dec_00000000000000000000", "X"), instance: undefined, requestId: undefined });
    expectProblem(await request(app).post(`${api}/decisions/${removed.id}/appeals`).send({ explanation: "No token, no account, no appeal." }), 401, "unauthenticated");
    expectProblem(await request(app).post(`${api}/decisions/${removed.id}/appeals`).send({ explanation: "A token of another notice entirely.", appealToken: "nap_wrong" }), 404, "not_found");
    expectProblem(await request(app).post(`${api}/decisions/${removed.id}/appeals`).set(bearer(reviewer)).send({ explanation: "short" }), 400, "invalid_request");
    expect((await request(app).post(`${api}/decisions/${removed.id}/appeals`).set(bearer(reviewer)).send({ explanation: "It was a joke between friends, not spam." })).status).toBe(201);
    // The reporter appeals too, as the other side, with the token shown once.
    expect((await request(app).post(`${api}/decisions/${removed.id}/appeals`).send({ explanation: "I want the author banned, not just the review.", appealToken: notice.appealToken })).status).toBe(201);
    const upheld = (await json("appeals", "list")).filter((item: { decisionId: string }) => item.decisionId === removed.id);
    expect(upheld.map((item: { side: string }) => item.side).sort()).toEqual(["affected", "reporter"]);
    await json("appeals", "decide", upheld[0].id, "--outcome", "upheld", "--reasons", "The review advertises a paid course.", "--operator", "second@ops.example");
    expect((await request(app).get(`${api}/modules/shady.notes/reviews`)).body.items).toEqual([]);
  });

  it("takes no appeal after six months, and reopens a notice whose no_action is reversed", async () => {
    const old = await sendNotice({ moduleId: "shady.notes" }, "other");
    const operator = { ...(await operatorDeps()), actor: { kind: "operator" as const, id: "first@ops.example" } };
    const longAgo = new Date(Date.now() - 200 * 86_400_000);
    const decided = await decideNotice({ ...operator, clock: () => longAgo }, old.id, { decision: "no_action", ground: "terms", reference: "Terms §1", facts: "Nothing wrong." });
    expectProblem(await request(app).post(`${api}/decisions/${decided.id}/appeals`).send({ explanation: "I only saw the email today.", appealToken: old.appealToken }), 409, "appeal_window_closed");

    const recent = await sendNotice({ moduleId: "shady.notes" }, "privacy");
    const noAction = await decide(recent.id, "no_action");
    const appeal = await request(app).post(`${api}/decisions/${noAction.id}/appeals`).send({ explanation: "It reads my contacts without asking.", appealToken: recent.appealToken });
    expect(appeal.status).toBe(201);
    await json("appeals", "decide", appeal.body.id, "--outcome", "reversed", "--reasons", "It does read contacts; decide again.", "--operator", "second@ops.example");
    expect(await json("notices", "show", recent.id)).toMatchObject({ status: "open", decisionId: null });

    // Two operators deciding one notice at once: one decision, the other told it is decided.
    const input = { decision: "no_action" as const, ground: "law" as const, reference: "Art. 6 GDPR", facts: "Contacts are read after consent." };
    const both = await Promise.allSettled([decideNotice(operator, recent.id, input), decideNotice({ ...operator, actor: { kind: "operator", id: "second@ops.example" } }, recent.id, input)]);
    expect(both.map((outcome) => outcome.status).sort()).toEqual(["fulfilled", "rejected"]);
    expect(both.find((outcome) => outcome.status === "rejected")).toMatchObject({ reason: { code: "already_decided" } });
    const { db } = await testDeps();
    expect((await db.collection("moderationDecisions").where("noticeId", "==", recent.id).get()).size).toBe(2);

    // An effect that fails leaves no decision behind: the publisher id of a module nobody holds any more.
    const orphan = await sendNotice({ moduleId: "shady.notes" }, "other");
    const claim = (await db.collection("publishers").doc("shady").get()).data()!;
    await db.collection("publishers").doc("shady").delete();
    await expect(decideNotice(operator, orphan.id, { ...input, decision: "suspend_publisher" })).rejects.toMatchObject({ code: "publisher_not_found" });
    await db.collection("publishers").doc("shady").set({ ...claim, developerId: publisher.uid });
    expect(await json("notices", "show", orphan.id)).toMatchObject({ status: "open", decisionId: null });
    expect((await db.collection("moderationDecisions").where("noticeId", "==", orphan.id).get()).size).toBe(0);
  });

  it("publishes the decisions without personal data, and counts exactly what happened", async () => {
    const period = `from=${today()}&to=${today()}`;
    const published = await request(app).get(`${api}/transparency/decisions?${period}&limit=100`);
    expect(published.status).toBe(200);
    expect(published.body.items).toHaveLength(6);
    for (const item of published.body.items) expect(Object.keys(item).sort()).toEqual(["automated", "category", "contentType", "decidedAt", "decision", "ground", "id", "reference"]);
    expect(JSON.stringify(published.body)).not.toMatch(/ana@example|rita@example|Ana|Rita|abroad/);

    const figures = await json("transparency", "--from", today(), "--to", today());
    expect(figures).toEqual({
      from: today(),
      to: today(),
      notices: {
        byCategory: { illegal_content: 0, intellectual_property: 0, malware: 1, scam_or_fraud: 3, protection_of_minors: 0, privacy: 1, other: 2 },
        bySource: { anonymous: 7, signed_in: 0, trusted_flagger: 0 },
      },
      // The decision of 200 days ago is another period's.
      decisions: { byKind: { no_action: 2, restrict_visibility: 1, remove: 2, suspend_publisher: 1 }, byGround: { law: 1, terms: 5 } },
      medianHoursToDecision: expect.any(Number),
      appeals: { upheld: 1, reversed: 3, open: 1 },
      suspensions: 1,
    });
    expect((await request(app).get(`${api}/transparency/figures?${period}`)).body).toEqual(figures);
    const csv = await admin("transparency", "--from", today(), "--to", today(), "--csv");
    expect(csv.stdout).toContain("decisions.byKind,remove,2\n");
    expect(csv.stdout).toContain("appeals,reversed,3\n");

    for (const bad of ["from=2026-13-01&to=2026-12-01", `from=${today()}`, "from=2026-02-01&to=2026-01-01", "from=2024-01-01&to=2026-01-01"]) {
      expectProblem(await request(app).get(`${api}/transparency/figures?${bad}`), 400, "invalid_request");
    }
    expect((await admin("transparency", "--from", "2026-02-01", "--to", "2026-01-01")).code).toBe(2);
  });
});
