import { calculateJwkThumbprint, CompactSign, compactVerify, createLocalJWKSet, exportJWK, generateKeyPair, type JSONWebKeySet, type KeyLike } from "jose";
import request from "supertest";
import { sha256Hex } from "./support/fixtures";
import { modulePackage } from "./support/packages";
import { bearer, createDeveloper, createUser, expectProblem, resetEmulators, storedObjects, testApp, testDeps, type TestDeveloper } from "./support/harness";

interface AuthorKey {
  privateKey: KeyLike;
  publicJwk: { kty: string; crv: string; x: string };
  kid: string;
}

async function authorKey(): Promise<AuthorKey> {
  const { privateKey, publicKey } = await generateKeyPair("EdDSA", { crv: "Ed25519" });
  const { kty, crv, x } = await exportJWK(publicKey);
  const publicJwk = { kty: kty!, crv: crv!, x: x! };
  return { privateKey, publicJwk, kid: await calculateJwkThumbprint(publicJwk) };
}

const authorSignature = (key: AuthorKey, payload: object, header: Record<string, unknown> = {}) =>
  new CompactSign(new TextEncoder().encode(JSON.stringify(payload))).setProtectedHeader({ alg: "EdDSA", kid: key.kid, ...header }).sign(key.privateKey);

/** Contract §15: authors sign their packages with their own keys, on top of the registry's signature. */
describe("author keys and signatures", () => {
  let acme: TestDeveloper;
  beforeEach(async () => {
    await resetEmulators();
    acme = await createDeveloper("acme");
  });

  const addKey = async (key: AuthorKey, who: { idToken: string } = acme, name = "release laptop") =>
    request(await testApp()).post("/api/v1/developers/keys").set(bearer(who)).send({ name, publicKey: key.publicJwk });
  const sign = async (bytes: Buffer, signature?: string, who: { idToken: string } = acme) => {
    const call = request(await testApp()).post("/api/v1/developers/modules/sign").set(bearer(who)).set("Content-Type", "application/octet-stream");
    if (signature !== undefined) call.set("X-Author-Signature", signature);
    return call.send(bytes);
  };
  const manifest = { id: "acme.charts", name: "Charts", version: "1.0.0", summary: "Charts." };

  it("registers keys with an ID token, lists them for the owner and publicly as JWKs, and revokes them", async () => {
    const key = await authorKey();
    const added = await addKey(key);
    expect(added.status).toBe(201);
    expect(added.body).toEqual({ kid: key.kid, name: "release laptop", createdAt: expect.any(String), revokedAt: null });
    expect((await request(await testApp()).get("/api/v1/developers/keys").set(bearer(acme))).body).toEqual({ items: [added.body] });

    const published = await request(await testApp()).get("/api/v1/publishers/acme/keys");
    expect(published.status).toBe(200);
    expect(published.headers["cache-control"]).toMatch(/^public/);
    expect(published.body).toEqual({ keys: [{ ...key.publicJwk, kid: key.kid, alg: "EdDSA", use: "sig", createdAt: added.body.createdAt }] });

    expect((await request(await testApp()).delete(`/api/v1/developers/keys/${key.kid}`).set(bearer(acme))).status).toBe(204);
    expect((await request(await testApp()).delete(`/api/v1/developers/keys/${key.kid}`).set(bearer(acme))).status).toBe(204);
    const after = await request(await testApp()).get("/api/v1/publishers/acme/keys");
    expect(after.body.keys[0].revokedAt).toEqual(expect.any(String));
    expectProblem(await addKey(key), 409, "author_key_exists");
    expectProblem(await request(await testApp()).get("/api/v1/publishers/nobody/keys"), 404, "not_found");

    const globex = await createDeveloper("globex");
    expectProblem(await request(await testApp()).delete(`/api/v1/developers/keys/${key.kid}`).set(bearer(globex)), 404, "not_found");
  });

  it("refuses a private key, another curve, a publisher token, and an 11th active key", async () => {
    const key = await authorKey();
    const { privateKey } = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
    const privateJwk = await exportJWK(privateKey);
    for (const publicKey of [privateJwk, { ...key.publicJwk, crv: "X25519" }, { ...key.publicJwk, x: "short" }, { kty: "RSA", n: "x", e: "AQAB" }]) {
      expectProblem(await request(await testApp()).post("/api/v1/developers/keys").set(bearer(acme)).send({ name: "k", publicKey }), 400, "invalid_request");
    }
    const accessToken = (await request(await testApp()).post("/api/v1/developers/tokens").set(bearer(acme)).send({ name: "CI" })).body.token as string;
    expectProblem(await addKey(key, { idToken: accessToken }), 401, "invalid_token");
    const user = await createUser();
    expectProblem(await addKey(key, user), 403, "not_a_developer");

    for (let i = 0; i < 10; i += 1) expect((await addKey(await authorKey(), acme, `key ${i}`)).status).toBe(201);
    expectProblem(await addKey(key), 400, "invalid_request");
    expect((await request(await testApp()).get("/api/v1/developers/keys").set(bearer(acme))).body.items).toHaveLength(10);
  });

  it("takes an author-signed package: the download answer carries the signature, the registry's payload names the key, and it verifies against the public list", async () => {
    const key = await authorKey();
    await addKey(key);
    const bytes = await modulePackage(manifest);
    const signed = await sign(bytes, await authorSignature(key, { moduleId: "acme.charts", version: "1.0.0", sha256: sha256Hex(bytes) }));
    expect(signed.status).toBe(201);
    expect(signed.body.authorKeyId).toBe(key.kid);
    expect((await request(await testApp()).post("/api/v1/developers/modules/publish").set(bearer(acme)).send({ moduleId: "acme.charts", version: "1.0.0" })).status).toBe(200);

    const user = await createUser();
    const download = await request(await testApp()).get("/api/v1/modules/download/acme.charts").set(bearer(user));
    expect(download.body).toMatchObject({ authorKeyId: key.kid, authorSignature: expect.any(String), provenance: null });
    const registryKeys = (await request(await testApp()).get("/api/v1/signing-keys")).body as JSONWebKeySet;
    const registry = JSON.parse(new TextDecoder().decode((await compactVerify(download.body.signature, createLocalJWKSet(registryKeys))).payload));
    expect(registry.authorKeyId).toBe(key.kid);

    const publisherKeys = (await request(await testApp()).get("/api/v1/publishers/acme/keys")).body as JSONWebKeySet;
    const author = await compactVerify(download.body.authorSignature, createLocalJWKSet(publisherKeys));
    expect(JSON.parse(new TextDecoder().decode(author.payload))).toEqual({ moduleId: "acme.charts", version: "1.0.0", sha256: sha256Hex(bytes) });
  });

  it("refuses a bad, foreign or revoked author signature with 422 and stores nothing", async () => {
    const key = await authorKey();
    const stranger = await authorKey();
    await addKey(key);
    const globex = await createDeveloper("globex");
    const theirs = await authorKey();
    await addKey(theirs, globex);
    const bytes = await modulePackage(manifest);
    const payload = { moduleId: "acme.charts", version: "1.0.0", sha256: sha256Hex(bytes) };
    const signature = await authorSignature(key, payload);
    const [header, body] = signature.split(".");
    const cases = [
      await authorSignature(key, { ...payload, sha256: "0".repeat(64) }),
      await authorSignature(key, { ...payload, version: "9.9.9" }),
      await authorSignature(key, { ...payload, moduleId: "acme.other" }),
      await authorSignature(stranger, payload),
      await authorSignature(theirs, payload),
      await authorSignature(stranger, payload, { kid: key.kid }),
      `${header}.${body}.${"A".repeat(86)}`,
      `${Buffer.from(JSON.stringify({ alg: "HS256", kid: key.kid })).toString("base64url")}.${body}.x`,
      `${Buffer.from(JSON.stringify({ alg: "none", kid: key.kid })).toString("base64url")}.${body}.`,
      "not a jws",
      "a".repeat(5000),
    ];
    for (const candidate of cases) expectProblem(await sign(bytes, candidate), 422, "invalid_author_signature");

    await request(await testApp()).delete(`/api/v1/developers/keys/${key.kid}`).set(bearer(acme));
    expectProblem(await sign(bytes, signature), 422, "invalid_author_signature");

    expect(await storedObjects("modules/")).toEqual([]);
    expect((await (await testDeps()).db.collection("modules").get()).size).toBe(0);
  });

  it("with requireAuthorSignature, refuses a sign without a valid signature with 403 policy_violation", async () => {
    const key = await authorKey();
    await addKey(key);
    const first = await modulePackage(manifest);
    expect((await sign(first)).status).toBe(201);
    const policy = await request(await testApp()).put("/api/v1/developers/modules/acme.charts/policy").set(bearer(acme)).send({ requireTrustedPublishing: false, requireAuthorSignature: true });
    expect(policy.status).toBe(200);

    const next = await modulePackage({ ...manifest, version: "1.1.0" });
    expectProblem(await sign(next), 403, "policy_violation");
    expectProblem(await sign(next, await authorSignature(key, { moduleId: "acme.charts", version: "1.1.0", sha256: "0".repeat(64) })), 422, "invalid_author_signature");
    const signed = await sign(next, await authorSignature(key, { moduleId: "acme.charts", version: "1.1.0", sha256: sha256Hex(next) }));
    expect(signed.status).toBe(201);
    expect(signed.body.authorKeyId).toBe(key.kid);
  });
});
