import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import request from "supertest";
import { countDocuments, putBusiness, sha256Hex } from "./support/fixtures";
import { json } from "./support/admin";
import { bearer, createDeveloper, createUser, expectProblem, publishModule, resetEmulators, testApp } from "./support/harness";
import { modulePackage } from "./support/packages";
import { signed, subscriptionEvent } from "./support/stripe-events";

/** Contract §14: every security-relevant action leaves one entry, naming who did it. */
describe("audit log", () => {
  beforeEach(resetEmulators);

  it("records publishers', operators' and billing's actions; operators read all, owners their modules'", async () => {
    const app = await testApp();
    const acme = await createDeveloper("acme");
    const contoso = await createDeveloper("contoso");
    await publishModule(contoso, { id: "contoso.charts", name: "Charts", version: "1.0.0", summary: "Charts." });

    // A publisher: a token created, used to sign and publish, then revoked; a yank and unyank with the ID token.
    const token = (await request(app).post("/api/v1/developers/tokens").set(bearer(acme)).send({ name: "CI" })).body;
    const asToken = { Authorization: `Bearer ${token.token}` };
    const signedVersion = await request(app).post("/api/v1/developers/modules/sign").set(asToken).set("Content-Type", "application/octet-stream").send(await modulePackage({ id: "acme.maps", name: "Maps" }));
    expect(signedVersion.status).toBe(201);
    expect((await request(app).post("/api/v1/developers/modules/publish").set(asToken).send({ moduleId: "acme.maps", version: "1.0.0" })).status).toBe(200);
    expect((await request(app).post("/api/v1/developers/modules/yank").set(bearer(acme)).set("X-Request-Id", "req-yank-1").send({ moduleId: "acme.maps", version: "1.0.0", reason: "Crashes." })).status).toBe(200);
    expect((await request(app).post("/api/v1/developers/modules/unyank").set(bearer(acme)).send({ moduleId: "acme.maps", version: "1.0.0" })).status).toBe(200);
    expect((await request(app).delete(`/api/v1/developers/tokens/${token.id}`).set(bearer(acme))).status).toBe(204);
    // A look-alike, quarantined, then approved by an operator.
    await request(app).post("/api/v1/developers/modules/sign").set(bearer(acme)).set("Content-Type", "application/octet-stream").send(await modulePackage({ id: "acme.chart", name: "Chart" }));

    // Operators, through the CLI, named by --actor.
    const as = ["--actor", "ops@example.test"];
    await json(...as, "review", "approve", "acme.chart", "1.0.0", "--note", "Checked.");
    await json(...as, "module", "revoke", "acme.maps", "--version", "1.0.0", "--reason", "Bad build.");
    await json(...as, "module", "unrevoke", "acme.maps", "--version", "1.0.0");
    const blocked = sha256Hex(Buffer.from("malware"));
    await json(...as, "blocklist", "add", blocked, "--reason", "Dropper.");
    await json(...as, "blocklist", "remove", blocked);
    const user = await createUser();
    await json(...as, "entitlement", "grant", "--user", user.uid, "--key", "pro");
    await json(...as, "entitlement", "revoke", "--user", user.uid, "--key", "pro");
    const installer = path.join(mkdtempSync(path.join(tmpdir(), "audit-")), "Setup.exe");
    writeFileSync(installer, "MZ installer".repeat(100));
    await json(...as, "release", "publish", "--file", installer, "--version", "1.0.0", "--platform", "win32", "--arch", "x64");
    await json(...as, "release", "rollout", "win32-x64-stable-1.0.0", "--percentage", "50");
    await json(...as, "release", "halt", "win32-x64-stable-1.0.0");
    await json(...as, "release", "yank", "win32-x64-stable-1.0.0", "--reason", "Broken.");
    await putBusiness("acme-corp", { name: "Acme Corp", memberIds: [] });
    await json(...as, "subscription", "set", "--business", "acme-corp", "--status", "active", "--plan", "team", "--period-end", "2030-01-01");
    // Billing.
    const event = subscriptionEvent({ businessId: "acme-corp" });
    const { payload, header } = signed(event);
    expect((await request(app).post("/api/v1/billing/stripe/webhook").set("Stripe-Signature", header).set("Content-Type", "application/json").send(payload)).status).toBe(200);

    const entries: { action: string; target: string; actor: { kind: string; id: string }; requestId: string | null }[] = await json("audit", "list", "--limit", "200");
    const summary = entries.map((entry) => `${entry.actor.kind} ${entry.action} ${entry.target}`).reverse();
    expect(summary).toEqual([
      expect.stringMatching(/^developer module\.sign contoso\.charts@1\.0\.0$/),
      expect.stringMatching(/^developer module\.publish contoso\.charts@1\.0\.0$/),
      `developer token.create ${acme.uid}`,
      "token module.sign acme.maps@1.0.0",
      "token module.publish acme.maps@1.0.0",
      "developer module.yank acme.maps@1.0.0",
      "developer module.unyank acme.maps@1.0.0",
      `developer token.revoke ${acme.uid}`,
      "developer module.sign acme.chart@1.0.0",
      "operator review.approve acme.chart@1.0.0",
      "operator module.revoke acme.maps@1.0.0",
      "operator module.unrevoke acme.maps@1.0.0",
      `operator blocklist.add ${blocked}`,
      `operator blocklist.remove ${blocked}`,
      `operator entitlement.grant ${user.uid}`,
      `operator entitlement.revoke ${user.uid}`,
      "operator release.publish win32-x64-stable-1.0.0",
      "operator release.rollout win32-x64-stable-1.0.0",
      "operator release.halt win32-x64-stable-1.0.0",
      "operator release.yank win32-x64-stable-1.0.0",
      "operator subscription.set acme-corp",
      "billing subscription.stripe acme-corp",
    ]);
    expect(entries.find((entry) => entry.action === "module.yank")).toMatchObject({ actor: { kind: "developer", id: acme.uid }, requestId: "req-yank-1" });
    expect(entries.find((entry) => entry.action === "module.publish" && entry.target.startsWith("acme"))!.actor).toEqual({ kind: "token", id: token.id });
    expect(entries.filter((entry) => entry.actor.kind === "operator").every((entry) => entry.actor.id === "ops@example.test")).toBe(true);
    expect(JSON.stringify(entries)).not.toContain(token.token);

    const maps: { action: string }[] = await json("audit", "list", "--target", "acme.maps");
    expect(maps.map((entry) => entry.action)).toEqual(["module.unrevoke", "module.revoke", "module.unyank", "module.yank", "module.publish", "module.sign"]);

    // The owner pages through their module's entries; nobody else reads them.
    const first = await request(app).get("/api/v1/developers/modules/acme.maps/audit?limit=4").set(bearer(acme));
    expect(first.status).toBe(200);
    expect(first.body.items.map((entry: { action: string }) => entry.action)).toEqual(["module.unrevoke", "module.revoke", "module.unyank", "module.yank"]);
    const second = await request(app).get(`/api/v1/developers/modules/acme.maps/audit?limit=4&cursor=${first.body.nextCursor}`).set(bearer(acme));
    expect(second.body).toEqual({ items: [expect.objectContaining({ action: "module.publish" }), expect.objectContaining({ action: "module.sign" })], nextCursor: null });
    expectProblem(await request(app).get("/api/v1/developers/modules/acme.maps/audit").set(bearer(contoso)), 403, "not_owner");
    expectProblem(await request(app).get("/api/v1/developers/modules/acme.nothing/audit").set(bearer(acme)), 404, "module_not_found");
    expectProblem(await request(app).get("/api/v1/developers/modules/acme.maps/audit?cursor=forged").set(bearer(acme)), 400, "invalid_request");
  });

  it("writes no entry for a refused change", async () => {
    const acme = await createDeveloper("acme");
    const app = await testApp();
    expectProblem(await request(app).post("/api/v1/developers/modules/publish").set(bearer(acme)).send({ moduleId: "acme.none", version: "1.0.0" }), 404, "module_not_found");
    expectProblem(await request(app).delete("/api/v1/developers/tokens/tok_unknown").set(bearer(acme)), 404, "token_not_found");
    expect(await countDocuments("auditLog")).toBe(0);
  });
});
