import { createHash, randomUUID } from "node:crypto";
import type { JSONWebKeySet } from "jose";
import request, { type Response } from "supertest";
import { UnverifiedAnswerError, verifyAnswer, type ReceivedAnswer } from "../../docs/examples/verify-answer";
import { putUser } from "./support/fixtures";
import { bearer, createDeveloper, createUser, expectProblem, publishModule, resetEmulators, testApp, type TestUser } from "./support/harness";

/** What the app received: supertest's answer as status, headers and the body's exact bytes. */
const received = (response: Response): ReceivedAnswer => ({
  status: response.status,
  headers: Object.fromEntries(Object.entries(response.headers).map(([name, value]) => [name, String(value)])),
  body: Buffer.from(response.text ?? ""),
});

const acceptSignature = (nonce: string) => ({ "Accept-Signature": `sig1=("@status" "content-digest" "content-type");nonce="${nonce}"` });

/** Contract §15: the answers the desktop app decides on carry RFC 9421 signatures a tampering network cannot rewrite. */
describe("signed answers", () => {
  let user: TestUser;
  let signingKeys: JSONWebKeySet;
  beforeAll(async () => {
    await resetEmulators();
    const acme = await createDeveloper("acme");
    await publishModule(acme, { id: "acme.charts", name: "Charts", version: "1.0.0", summary: "Charts.", entitlement: "pro" });
    await publishModule(acme, { id: "acme.notes", name: "Notes", version: "1.0.0", summary: "Notes." });
    user = await createUser();
    signingKeys = (await request(await testApp()).get("/api/v1/signing-keys")).body;
  });

  const calls: [string, (nonce: Record<string, string>) => Promise<Response>][] = [
    ["GET /users/me", async (headers) => request(await testApp()).get("/api/v1/users/me").set(bearer(user)).set(headers)],
    ["POST /modules/confirm", async (headers) => request(await testApp()).post("/api/v1/modules/confirm").set(bearer(user)).set(headers).send({ moduleId: "acme.notes" })],
    ["GET /modules/download/:id", async (headers) => request(await testApp()).get("/api/v1/modules/download/acme.notes").set(bearer(user)).set(headers)],
    [
      "POST /modules/updates",
      async (headers) =>
        request(await testApp()).post("/api/v1/modules/updates").set(bearer(user)).set(headers).send({ appVersion: "1.0.0", installed: [{ moduleId: "acme.notes", version: "0.9.0" }] }),
    ],
    ["GET /revocations", async (headers) => request(await testApp()).get("/api/v1/revocations").set(headers)],
  ];

  it.each(calls)("%s is signed over @status, Content-Digest and Content-Type with the JWKS key, echoing the nonce", async (_name, call) => {
    const nonce = randomUUID();
    const response = await call(acceptSignature(nonce));
    expect(response.status).toBe(200);
    expect(response.headers["content-digest"]).toMatch(/^sha-256=:[A-Za-z0-9+/]+=*:$/);
    expect(response.headers["signature-input"]).toMatch(
      new RegExp(`^sig1=\\("@status" "content-digest" "content-type"\\);created=\\d+;keyid="${signingKeys.keys[0].kid}";alg="ed25519";nonce="${nonce}"$`),
    );
    expect(response.headers["signature"]).toMatch(/^sig1=:[A-Za-z0-9+/]+=*:$/);
    expect(response.headers["cache-control"]).toBe("private, no-store, no-transform");
    await expect(verifyAnswer(received(response), signingKeys, { nonce })).resolves.toEqual({ keyid: signingKeys.keys[0].kid });

    // A recorded answer replayed to another request (another nonce) does not verify.
    await expect(verifyAnswer(received(response), signingKeys, { nonce: randomUUID() })).rejects.toThrow(UnverifiedAnswerError);
    await expect(verifyAnswer(received(response), signingKeys)).rejects.toThrow(UnverifiedAnswerError);
  });

  it("signs refusals too, so a 403 cannot be turned into a 200 nor a 200 body into another", async () => {
    const nonce = randomUUID();
    const refused = await request(await testApp()).get("/api/v1/modules/download/acme.charts").set(bearer(user)).set(acceptSignature(nonce));
    expectProblem(refused, 403, "not_entitled");
    const answer = received(refused);
    await expect(verifyAnswer(answer, signingKeys, { nonce })).resolves.toBeDefined();

    const entitled = Buffer.from(JSON.stringify({ moduleId: "acme.charts", url: "https://evil.example/charts.mpkg" }));
    await expect(verifyAnswer({ ...answer, status: 200 }, signingKeys, { nonce })).rejects.toThrow(UnverifiedAnswerError);
    await expect(verifyAnswer({ ...answer, body: entitled }, signingKeys, { nonce })).rejects.toThrow("Content-Digest");
    const redigested = { ...answer, body: entitled, headers: { ...answer.headers, "content-digest": `sha-256=:${createHash("sha256").update(entitled).digest("base64")}:` } };
    await expect(verifyAnswer(redigested, signingKeys, { nonce })).rejects.toThrow(UnverifiedAnswerError);
    await expect(verifyAnswer({ ...answer, headers: { ...answer.headers, "content-type": "application/json" } }, signingKeys, { nonce })).rejects.toThrow(UnverifiedAnswerError);
    const unsigned = { ...answer, headers: Object.fromEntries(Object.entries(answer.headers).filter(([name]) => !name.startsWith("signature"))) };
    await expect(verifyAnswer(unsigned, signingKeys, { nonce })).rejects.toThrow(UnverifiedAnswerError);

    await putUser(user.uid, { entitlements: ["pro"] });
    const granted = await request(await testApp()).get("/api/v1/modules/download/acme.charts").set(bearer(user)).set(acceptSignature(nonce));
    expect(granted.status).toBe(200);
    await expect(verifyAnswer(received(granted), signingKeys, { nonce })).resolves.toBeDefined();
  });

  it("signs without a nonce when none is asked for, and lets caches share the public revocation list only then", async () => {
    const plain = await request(await testApp()).get("/api/v1/revocations");
    expect(plain.headers["signature-input"]).not.toContain("nonce");
    expect(plain.headers["cache-control"]).toMatch(/^public, .*no-transform$/);
    expect(plain.headers["vary"]).toMatch(/Accept-Signature/);
    await expect(verifyAnswer(received(plain), signingKeys)).resolves.toBeDefined();
    const bound = await request(await testApp()).get("/api/v1/revocations").set(acceptSignature("n-1"));
    expect(bound.headers["cache-control"]).toBe("private, no-store, no-transform");
    expect(bound.headers["etag"]).toBeUndefined();
  });

  it("refuses a malformed Accept-Signature with a signed 400, and leaves other routes unsigned", async () => {
    for (const header of ["sig1=(", 'sig1=("@status");nonce=42', `sig1=("@status");nonce="${"n".repeat(300)}"`]) {
      const response = await request(await testApp()).get("/api/v1/users/me").set(bearer(user)).set("Accept-Signature", header);
      expectProblem(response, 400, "invalid_request");
      await expect(verifyAnswer(received(response), signingKeys)).resolves.toBeDefined();
    }
    const unsignedRoute = await request(await testApp()).get("/api/v1/modules").set(acceptSignature("n"));
    expect(unsignedRoute.headers["signature"]).toBeUndefined();
    const other = await request(await testApp()).get("/api/v1/users/me").set(bearer(user)).set("Accept-Signature", 'sig2=("@status");nonce="x"');
    expect(other.headers["signature-input"]).not.toContain("nonce");
  });

  it("signs an unauthenticated refusal", async () => {
    const response = await request(await testApp()).get("/api/v1/users/me").set(acceptSignature("n-2"));
    expectProblem(response, 401, "unauthenticated");
    await expect(verifyAnswer(received(response), signingKeys, { nonce: "n-2" })).resolves.toBeDefined();
  });
});
