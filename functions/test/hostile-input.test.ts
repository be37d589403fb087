import fc from "fast-check";
import { connect, type AddressInfo } from "node:net";
import request from "supertest";
import { localServer } from "../src/local";
import type { Express } from "express";
import { modulePackage } from "./support/packages";
import { bearer, createDeveloper, createUser, expectProblem, publishModule, resetEmulators, storedObjects, testApp, testDeps, type TestDeveloper, type TestUser } from "./support/harness";

/** No input a client can send makes a 5xx: every error is problem+json with a contract code. */

type Operation = {
  method: string;
  path: string;
  parameters: { name: string; in: "path" | "query" }[];
  json: boolean;
  raw: boolean;
  codes: Set<string>;
};

interface OpenApiDocument {
  paths: Record<string, Record<string, {
    parameters?: { name: string; in: "path" | "query" }[];
    requestBody?: { content: Record<string, unknown> };
    responses: Record<string, { description: string }>;
  }>>;
}

/** The operations of the served document, each with the problem codes it may answer. */
function operationsOf(document: OpenApiDocument): Operation[] {
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({
      method,
      path,
      parameters: operation.parameters ?? [],
      json: Boolean(operation.requestBody?.content["application/json"]),
      raw: Boolean(operation.requestBody && !operation.requestBody.content["application/json"]),
      codes: new Set(
        Object.values(operation.responses).flatMap((response) => /^Problem: (.*)\.$/.exec(response.description)?.[1].split(", ") ?? []),
      ),
    })),
  );
}

/** Names Firestore reserves or refuses as document ids and map keys. */
const reservedName = fc.oneof(
  fc.constantFrom(".", "..", "__x__", "____", "__.__", "__name__", `__${"a".repeat(39)}__`, "a".repeat(1501), "é".repeat(751), "x".repeat(1500)),
  fc.stringMatching(/^__[A-Za-z0-9._:-]{0,12}__$/),
);

/** Strings a hostile client tries: ids that are not Firestore ids, encodings, surrogates, huge. */
const nastyString = fc.oneof(
  reservedName,
  fc.constantFrom("", "a/b", "1.0.0/x", "%ZZ", "%ff", "\ud800", "\u0000", "../../etc/passwd", "C:\\x", "null", "[]", "{}", "1e309", "-1", "0", "x".repeat(5000)),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.string({ maxLength: 40 }),
  fc.constantFrom("acme.tool", "acme", "1.0.0", "2.0.0-beta.1", "win32", "stable", "x64", "acme-biz"),
);
const nastyJson = fc.oneof(nastyString, fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.jsonValue({ maxDepth: 2 }));

/** JSON text nested deeper than any recursive walker survives, as a whole body or in one field (bytes: JSON.stringify would overflow). */
const deepJson = fc
  .tuple(fc.double({ min: 0.2, max: 1, noNaN: true }), fc.constantFrom("array", "object"), fc.constantFrom("", "moduleId", "deviceId", "installed"))
  .map(([share, kind, field]) => {
    // Up to the 100 KiB body limit: 2 bytes a level for arrays, 6 for objects.
    const [open, close, most] = kind === "array" ? ["[", "]", 50_000] : ['{"a":', "}", 16_000];
    const depth = Math.floor(share * most);
    const nested = `${open.repeat(depth)}1${close.repeat(depth)}`;
    return Buffer.from(field ? `{"${field}":${nested}}` : nested);
  });

/** A path segment as a client may put it on the wire: escaped, raw, or with broken escapes. */
const pathSegment = fc.oneof(
  nastyString.map((value) => encodeURIComponent(value.isWellFormed() ? value : value.toWellFormed())),
  fc.constantFrom("%ZZ", "%ff", "%", "%2F", "%2e%2e", "a%00b", "%C0%AF", "%ED%A0%80"),
);

describe("hostile input", () => {
  let app: Express;
  let user: TestUser;
  let developer: TestDeveloper;

  beforeAll(async () => {
    await resetEmulators();
    app = await testApp({ config: { rateLimit: { perIpPerMinute: 1_000_000, perUserPerMinute: 1_000_000 } } });
    user = await createUser();
    developer = await createDeveloper("acme");
    for (const moduleId of ["acme.tool", "acme.other"]) {
      await publishModule(developer, { id: moduleId, version: "1.0.0" });
    }
  });

  describe("named cases", () => {
    it.each(["/api/v1/subscriptions/%ZZ", "/api/v1/modules/download/%ff", "/api/v1/modules/download/%ED%A0%80"])("answers bad percent-encoding in %s with 400", async (path) => {
      expectProblem(await request(app).get(path).set(bearer(user)), 400, "invalid_request");
    });

    it("refuses forged, tampered and foreign cursors with 400", async () => {
      const forged = (payload: object) => Buffer.from(JSON.stringify(payload)).toString("base64url");
      const first = await request(app).get("/api/v1/modules?limit=1");
      expect(first.status).toBe(200);
      const [payload, mac] = String(first.body.nextCursor).split(".");
      const tampered = `${forged({ ...JSON.parse(Buffer.from(payload, "base64url").toString()), id: "zzz" })}.${mac}`;
      for (const cursor of [forged({ s: 1, n: 0, id: "a/b" }), forged({ s: 1, n: 0, id: ".." }), `${forged({ s: 1, n: 0, id: "__x__" })}.${mac}`, tampered, `${payload}.`, `${payload}.${mac}.x`]) {
        expectProblem(await request(app).get("/api/v1/modules").query({ cursor }), 400, "invalid_request");
      }
    });

    it("refuses control characters in text (§1), keeps a review body's newlines, and stores nothing refused", async () => {
      const refused = [
        ["/api/v1/businesses", { name: "Acme\u0000Corp" }, "name"],
        ["/api/v1/businesses", { name: "Acme\nCorp" }, "name"],
        ["/api/v1/businesses", { name: "Acme\u007fCorp" }, "name"],
        ["/api/v1/developers/keys", { name: "laptop\u0007", publicKey: {} }, "name"],
        ["/api/v1/updates/reports", { releaseId: "r1", stagingId: "a\u0000b", fromVersion: "1.0.0", event: "installed" }, "stagingId"],
      ] as const;
      for (const [path, body, field] of refused) {
        const answer = await request(app).post(path).set(bearer(developer)).send(body);
        expectProblem(answer, 400, "invalid_request");
        expect(answer.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ path: field })]));
      }
      const { db } = await testDeps();
      expect((await db.collectionGroup("members").where("uid", "==", developer.uid).get()).size).toBe(0);
      const reviewer = await createUser();
      const activated = await request(app).post("/api/v1/modules/confirm").set(bearer(reviewer)).send({ moduleId: "acme.tool" });
      expect(activated.status).toBe(200);
      const review = (body: object) => request(app).put("/api/v1/modules/acme.tool/reviews/me").set(bearer(reviewer)).send({ rating: 4, ...body });
      expectProblem(await review({ title: "Good\u0000" }), 400, "invalid_request");
      expectProblem(await review({ title: "Two\nlines" }), 400, "invalid_request");
      expectProblem(await review({ body: "Bell\u0007" }), 400, "invalid_request");
      const kept = await review({ title: "Good", body: "First line\n\tindented second" });
      expect(kept.status).toBe(200);
      expect(kept.body.body).toBe("First line\n\tindented second");
      expectProblem(await request(app).get("/api/v1/modules").query({ q: "chart\u0000" }), 400, "invalid_request");
      // A path parameter too, where its kind of id would otherwise take it (a business id).
      const inPath = await request(app).get("/api/v1/businesses/acme%01corp").set(bearer(user));
      expectProblem(inPath, 400, "invalid_request");
      expect(inPath.body.errors).toEqual([{ path: "businessId", message: "Control characters are not allowed." }]);
    });

    it("refuses emails beyond RFC 5321's lengths (§1)", async () => {
      const owner = await createUser();
      const business = await request(app).post("/api/v1/businesses").set(bearer(owner)).send({ name: "Mail Corp" });
      expect(business.status).toBe(201);
      const invite = (email: string) => request(app).post(`/api/v1/businesses/${business.body.id}/invitations`).set(bearer(owner)).send({ email });
      expectProblem(await invite(`${"a".repeat(65)}@example.com`), 400, "invalid_request");
      expectProblem(await invite(`${"a".repeat(242)}@example.com`), 400, "invalid_request");
      expectProblem(await invite(`a@${"b".repeat(250)}.com`), 400, "invalid_request");
      expect((await invite(`${"a".repeat(64)}@example.com`)).status).toBe(201);
      const register = await request(app).post("/api/v1/developers/auth/register").send({ email: `${"a".repeat(65)}@example.com`, password: "long-enough-password", displayName: "A", publisherId: "longmail" });
      expectProblem(register, 400, "invalid_request");
    });

    it("answers a path segment too long for its kind of id with that resource's own 404 (§1)", async () => {
      const long = "a".repeat(300);
      expectProblem(await request(app).get(`/api/v1/modules/${long}`), 404, "module_not_found");
      expectProblem(await request(app).get(`/api/v1/modules/acme.${long}`), 404, "module_not_found");
      expectProblem(await request(app).get(`/api/v1/modules/download/acme.${"b".repeat(120)}`).set(bearer(user)), 404, "module_not_found");
      expectProblem(await request(app).get(`/api/v1/businesses/${long}`).set(bearer(user)), 404, "business_not_found");
      expectProblem(await request(app).get(`/api/v1/invitations/inv_${long}`), 404, "invitation_not_found");
      expectProblem(await request(app).get(`/api/v1/publishers/${long}/keys`), 404, "not_found");
      // Malformed but not too long: still the 400 that says what is wrong.
      expectProblem(await request(app).get("/api/v1/modules/download/Not_An_Id").set(bearer(user)), 400, "invalid_request");
    });

    it.each(["a/b", "..", "__x__", "1.0.0/x", "1.0", "v1.0.0"])("refuses version %p in download, confirm and publish with 400", async (version) => {
      expectProblem(await request(app).get("/api/v1/modules/download/acme.tool").query({ version }).set(bearer(user)), 400, "invalid_request");
      expectProblem(await request(app).post("/api/v1/modules/confirm").set(bearer(user)).send({ moduleId: "acme.tool", version }), 400, "invalid_request");
      expectProblem(await request(app).post("/api/v1/developers/modules/publish").set(bearer(developer)).send({ moduleId: "acme.tool", version }), 400, "invalid_request");
    });

    it.each([
      ["a bad method", "G@T /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n", 400, "invalid_request"],
      ["CR inside a header", "GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n", 400, "invalid_request"],
      ["no Host header", "GET /api/v1/health HTTP/1.1\r\n\r\n", 400, "invalid_request"],
      ["headers over the limit", `GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`, 431, "headers_too_large"],
    ])("answers a request Node's parser refuses (%s) with a problem, where the server is ours", async (_name, raw, status, code) => {
      const server = localServer(app);
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      try {
        const answer = await new Promise<string>((resolve, reject) => {
          const socket = connect((server.address() as AddressInfo).port, "127.0.0.1", () => socket.end(raw));
          let text = "";
          socket.on("data", (chunk) => (text += chunk.toString()));
          socket.on("close", () => resolve(text));
          socket.on("error", reject);
        });
        const [head, body] = answer.split("\r\n\r\n");
        expect(head).toMatch(new RegExp(`^HTTP/1.1 ${status} `));
        expect(head).toMatch(/Content-Type: application\/problem\+json/);
        expect(JSON.parse(body)).toMatchObject({ status, code, requestId: expect.any(String) });
      } finally {
        await new Promise((resolve) => server.close(resolve));
      }
    });

    it("answers JSON nested 50,000 deep with 400 on every JSON operation", async () => {
      const document = (await request(app).get("/api/v1/openapi.json")).body as OpenApiDocument;
      const deep = `${"[".repeat(50_000)}${"]".repeat(50_000)}`;
      const jsonOperations = operationsOf(document).filter((operation) => operation.json);
      expect(jsonOperations.length).toBeGreaterThan(5);
      for (const operation of jsonOperations) {
        const url = `/api/v1${operation.path.replace(/\{[^}]+\}/g, "x")}`;
        const response = await request(app)[operation.method as "post"](url).set(bearer(developer)).set("Content-Type", "application/json").send(deep);
        // Refused by the body check, or before it (an access-token route, an unknown id in the path).
        expect({ url, refused: [400, 401, 404].includes(response.status), type: response.headers["content-type"] }).toEqual({ url, refused: true, type: expect.stringMatching(/^application\/problem\+json/) });
      }
      const nestedField = `{"moduleId":"acme.tool","deviceId":${"{\"a\":".repeat(15_000)}1${"}".repeat(15_000)}}`;
      expectProblem(await request(app).post("/api/v1/modules/confirm").set(bearer(user)).set("Content-Type", "application/json").send(nestedField), 400, "invalid_request");
    });

    it("answers every path parameter that names an id, given an id Firestore cannot take, with a 4xx problem and no Firestore call", async () => {
      const document = (await request(app).get("/api/v1/openapi.json")).body as OpenApiDocument;
      const withIds = operationsOf(document).filter((operation) => operation.parameters.some((parameter) => parameter.in === "path"));
      expect(withIds.length).toBeGreaterThan(10);
      const ids = ["%20", ".", "..", "%2E%2E", "__x__", `__${"a".repeat(39)}__`, `__${"B".repeat(20)}__`, "a%2Fb", "%2F", "x".repeat(1501)];
      for (const operation of withIds) {
        for (const id of ids) {
          const url = `/api/v1${operation.path.replace(/\{[^}]+\}/g, id)}`;
          const started = Date.now();
          const response = await request(app)[operation.method as "get"](url).set(bearer(developer));
          expect({ url, status: response.status, type: response.headers["content-type"] }).toEqual({ url, status: expect.any(Number), type: expect.stringMatching(/^application\/problem\+json/) });
          expect({ url, clientError: response.status >= 400 && response.status < 500 }).toEqual({ url, clientError: true });
          // A reserved id that reached Firestore fails only after its retries, seconds later.
          expect({ url, quick: Date.now() - started < 2_000 }).toEqual({ url, quick: true });
        }
      }
    });

    it.each(["", "/", "a/b", ".", "..", "__x__", `__${"a".repeat(39)}__`, "\ud800", "x".repeat(2000)])("answers an author signature naming kid %p with a 4xx problem, storing nothing", async (kid) => {
      const manifest = { id: "acme.tool", version: "3.0.0" };
      const header = Buffer.from(JSON.stringify({ alg: "EdDSA", kid })).toString("base64url");
      const response = await request(app).post("/api/v1/developers/modules/sign").set(bearer(developer))
        .set("Content-Type", "application/octet-stream").set("X-Author-Signature", `${header}.e30.AAAA`).send(await modulePackage(manifest));
      expect(response.status).toBeGreaterThanOrEqual(400);
      expect(response.status).toBeLessThan(500);
      expect(response.headers["content-type"]).toMatch(/^application\/problem\+json/);
      expect(await storedObjects("modules/acme.tool/3.0.0")).toEqual([]);
    });

    it.each(["__x__", "__.__", ".", ".."])("refuses device id %p, a name Firestore reserves, with 400, writing nothing", async (deviceId) => {
      expectProblem(await request(app).post("/api/v1/modules/confirm").set(bearer(user)).send({ moduleId: "acme.tool", deviceId }), 400, "invalid_request");
      expectProblem(await request(app).delete(`/api/v1/modules/activations/acme.tool/devices/${encodeURIComponent(deviceId)}`).set(bearer(user)), 400, "invalid_request");
      expect((await request(app).get("/api/v1/users/me").set(bearer(user))).body.activations).toEqual([]);
    });

    it("refuses lone surrogates in stored strings with 400, writing nothing", async () => {
      const confirm = await request(app).post("/api/v1/modules/confirm").set(bearer(user)).set("Content-Type", "application/json")
        .send('{"moduleId":"acme.tool","deviceId":"\\ud800"}');
      expectProblem(confirm, 400, "invalid_request");
      expect(confirm.body.errors).toEqual([{ path: "deviceId", message: "Not well-formed Unicode." }]);
      const other = await createUser();
      expectProblem(
        await request(app).post("/api/v1/developers/auth/register").set(bearer(other)).set("Content-Type", "application/json")
          .send('{"displayName":"Eve \\udc00","publisherId":"eve"}'),
        400,
        "invalid_request",
      );
      expectProblem(await request(app).get("/api/v1/developers/me").set(bearer(other)), 403, "not_a_developer");
      expect((await request(app).get("/api/v1/users/me").set(bearer(user))).body.activations).toEqual([]);
    });
  });

  it("answers every operation of the OpenAPI document, fed generated valid and invalid input, without a 5xx", async () => {
    const document = (await request(app).get("/api/v1/openapi.json")).body as OpenApiDocument;
    const operations = operationsOf(document);
    const universal = new Set(["not_found", "method_not_allowed", "rate_limited", "invalid_request"]);
    const valid = await modulePackage({ id: "acme.tool", version: "1.0.1" });
    const auth = fc.constantFrom<(() => Record<string, string>)[]>(
      () => ({}),
      () => bearer(user),
      () => bearer(developer),
      () => ({ Authorization: "Bearer not-a-token" }),
      () => ({ Authorization: "Basic YTpi" }),
      () => ({ Authorization: `Bearer ${user.idToken}x` }),
    );
    // Package bytes: a valid package with bytes flipped or cut, random bytes, or nothing.
    const packageBytes = fc.oneof(
      fc.array(fc.tuple(fc.nat(valid.length - 1), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 }).map((flips) => {
        const bytes = Buffer.from(valid);
        for (const [at, value] of flips) bytes[at] = value;
        return bytes;
      }),
      fc.nat(valid.length).map((cut) => valid.subarray(0, cut)),
      fc.uint8Array({ maxLength: 512 }).map((bytes) => Buffer.from(bytes)),
    );

    const statuses = new Map<number, number>();
    for (const operation of operations) {
      const bodyFields = operation.json ? ["moduleId", "version", "deviceId", "email", "password", "displayName", "publisherId"] : [];
      const input = fc.record({
        headers: auth,
        path: fc.tuple(...operation.parameters.filter((p) => p.in === "path").map(() => pathSegment)),
        query: fc.dictionary(
          fc.oneof(fc.constantFrom(...operation.parameters.filter((p) => p.in === "query").map((p) => p.name), "unknown"), fc.string({ maxLength: 5 })),
          fc.oneof(nastyString, fc.array(nastyString, { maxLength: 2 })),
          { maxKeys: 3 },
        ),
        body: operation.json
          ? fc.oneof(fc.dictionary(fc.constantFrom(...bodyFields), nastyJson, { maxKeys: 5 }), nastyJson, deepJson)
          : operation.raw
            ? packageBytes
            : fc.constant(undefined),
        contentType: fc.constantFrom("application/json", "application/octet-stream", "text/plain", "application/json; charset=latin1"),
      });
      await fc.assert(
        fc.asyncProperty(input, async ({ headers, path, query, body, contentType }) => {
          let index = 0;
          const url = `/api/v1${operation.path.replace(/\{[^}]+\}/g, () => path[index++])}`;
          let call = request(app)[operation.method as "get" | "post"](url).set(headers()).query(query);
          if (body !== undefined) {
            const wire = Buffer.isBuffer(body) ? body : JSON.stringify(body);
            const type = operation.raw ? (contentType === "application/json" ? "application/octet-stream" : contentType) : contentType;
            call = call.set("Content-Type", type).send(wire);
          }
          const response = await call;
          statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
          // This app has no Stripe key: the §20 calls that reach Stripe answer the contract's 503
          // billing_not_configured, whatever the input. Every other 5xx is a defect.
          if (response.body?.code !== "billing_not_configured") expect(response.status).toBeLessThan(500);
          if (response.status >= 400) {
            expect(response.headers["content-type"]).toMatch(/^application\/problem\+json/);
            expect(response.body.status).toBe(response.status);
            expect(operation.codes.has(response.body.code) || universal.has(response.body.code)).toBe(true);
          }
        }),
        { numRuns: operation.raw ? 150 : 60, seed: Number(process.env.FUZZ_SEED ?? 20261122) },
      );
    }
    // The generators reach past validation too: some calls succeed.
    expect([...statuses.keys()].some((status) => status < 300)).toBe(true);
  }, 180_000);
});
