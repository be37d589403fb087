import request from "supertest";
import { countDocuments } from "./support/fixtures";
import { developerSchema, sessionSchema } from "../src/developers/schemas";
import { bearer, createDeveloper, createUser, expectProblem, resetEmulators, testApp, testDeps } from "./support/harness";

const register = async (body: object, token?: string) => {
  const call = request(await testApp()).post("/api/v1/developers/auth/register");
  if (token) call.set("Authorization", `Bearer ${token}`);
  return call.send(body);
};

describe("developer accounts", () => {
  beforeEach(resetEmulators);

  describe("POST /developers/auth/register with email and password", () => {
    const body = { email: "dev@example.test", password: "long-enough-pw", displayName: "Dev One", publisherId: "acme" };

    it("creates the user and the developer, and signs in: 201 with a working ID token", async () => {
      const response = await register(body);
      expect(response.status).toBe(201);
      expect(sessionSchema.parse(response.body)).toBeTruthy();
      expect(response.body.developer).toEqual({
        id: expect.any(String),
        email: "dev@example.test",
        displayName: "Dev One",
        publisherId: "acme",
        createdAt: expect.any(String),
      });
      expect(response.body.expiresIn).toBeGreaterThan(0);
      const me = await request(await testApp()).get("/api/v1/developers/me").set("Authorization", `Bearer ${response.body.idToken}`);
      expect(me.status).toBe(200);
      expect(me.body).toEqual(response.body.developer);
    });

    it("answers 409 email_exists for a registered email, 409 publisher_taken for a claimed publisher id, creating nothing", async () => {
      expect((await register(body)).status).toBe(201);
      expectProblem(await register({ ...body, publisherId: "other" }), 409, "email_exists");
      expectProblem(await register({ ...body, email: "second@example.test" }), 409, "publisher_taken");
      const { auth } = await testDeps();
      await expect(auth.getUserByEmail("second@example.test")).rejects.toMatchObject({ code: "auth/user-not-found" });
      expect(await countDocuments("developers")).toBe(1);
    });

    it.each([
      [{ ...body, publisherId: "Acme" }, "publisherId"],
      [{ ...body, publisherId: "ab" }, "publisherId"],
      [{ ...body, publisherId: "1acme" }, "publisherId"],
      [{ ...body, publisherId: "a".repeat(33) }, "publisherId"],
      [{ ...body, password: "short" }, "password"],
      [{ ...body, email: "not-an-email" }, "email"],
      [{ ...body, admin: true }, "admin"],
    ])("rejects %p with 400 naming %s", async (invalid, field) => {
      const response = await register(invalid);
      expectProblem(response, 400, "invalid_request");
      expect(response.body.errors.map((error: { path: string }) => error.path)).toContain(field);
    });

    it("needs email and password when there is no token", async () => {
      const response = await register({ displayName: "X", publisherId: "acme" });
      expectProblem(response, 400, "invalid_request");
      expect(response.body.errors.map((error: { path: string }) => error.path)).toEqual(["email", "password"]);
    });

    it("gives exactly one of concurrent registrations a publisher id, and leaves no stray users", async () => {
      const app = await testApp();
      const attempts = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          request(app)
            .post("/api/v1/developers/auth/register")
            .send({ email: `racer${i}@example.test`, password: "long-enough-pw", displayName: `Racer ${i}`, publisherId: "contested" }),
        ),
      );
      const statuses = attempts.map((response) => response.status).sort();
      expect(statuses).toEqual([201, 409, 409, 409, 409, 409]);
      attempts.filter((r) => r.status === 409).forEach((r) => expect(r.body.code).toBe("publisher_taken"));
      const { auth } = await testDeps();
      expect((await auth.listUsers()).users).toHaveLength(1);
    });
  });

  describe("POST /developers/auth/register with a Bearer token", () => {
    it("turns the existing user into a developer: 201 { developer }", async () => {
      const user = await createUser();
      const response = await register({ displayName: "Existing", publisherId: "globex" }, user.idToken);
      expect(response.status).toBe(201);
      expect(response.body).toEqual({
        developer: { id: user.uid, email: user.email, displayName: "Existing", publisherId: "globex", createdAt: expect.any(String) },
      });
    });

    it("answers 409 already_registered the second time, and publisher_taken for another's id", async () => {
      const user = await createUser();
      expect((await register({ displayName: "A", publisherId: "globex" }, user.idToken)).status).toBe(201);
      expectProblem(await register({ displayName: "A", publisherId: "globex2" }, user.idToken), 409, "already_registered");
      const other = await createUser();
      expectProblem(await register({ displayName: "B", publisherId: "globex" }, other.idToken), 409, "publisher_taken");
    });

    it("rejects email and password fields with a token (400), and a bad token (401)", async () => {
      const user = await createUser();
      const response = await register({ email: "x@example.test", password: "long-enough-pw", displayName: "A", publisherId: "globex" }, user.idToken);
      expectProblem(response, 400, "invalid_request");
      expect(response.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(["email", "password"]);
      expectProblem(await register({ displayName: "A", publisherId: "globex" }, "garbage"), 401, "invalid_token");
    });
  });

  describe("POST /developers/auth/login", () => {
    it("signs a developer in", async () => {
      await register({ email: "dev@example.test", password: "long-enough-pw", displayName: "Dev", publisherId: "acme" });
      const response = await request(await testApp()).post("/api/v1/developers/auth/login").send({ email: "dev@example.test", password: "long-enough-pw" });
      expect(response.status).toBe(200);
      expect(sessionSchema.parse(response.body).developer.publisherId).toBe("acme");
      const me = await request(await testApp()).get("/api/v1/developers/me").set("Authorization", `Bearer ${response.body.idToken}`);
      expect(me.status).toBe(200);
    });

    it("answers 401 invalid_credentials for a wrong password or an unknown email, alike", async () => {
      await register({ email: "dev@example.test", password: "long-enough-pw", displayName: "Dev", publisherId: "acme" });
      const app = await testApp();
      const wrong = await request(app).post("/api/v1/developers/auth/login").send({ email: "dev@example.test", password: "wrong-password" });
      const unknown = await request(app).post("/api/v1/developers/auth/login").send({ email: "nobody@example.test", password: "whatever1" });
      expectProblem(wrong, 401, "invalid_credentials");
      expectProblem(unknown, 401, "invalid_credentials");
      expect(wrong.body.detail).toBe(unknown.body.detail);
    });

    it("limits failed logins per account, from however many addresses, across instances (state in Firestore)", async () => {
      await register({ email: "dev@example.test", password: "long-enough-pw", displayName: "Dev", publisherId: "acme" });
      // Two apps: two function instances, sharing nothing but Firestore.
      const instances = [
        await testApp({ config: { loginLimit: { maxFailures: 5, windowMs: 60_000 }, trustProxyHops: 1 } }),
        await testApp({ config: { loginLimit: { maxFailures: 5, windowMs: 60_000 }, trustProxyHops: 1 } }),
      ];
      const attempt = (index: number, password: string, email = "dev@example.test") =>
        request(instances[index % 2]).post("/api/v1/developers/auth/login").set("X-Forwarded-For", `203.0.113.${index}`).send({ email, password });
      for (let index = 0; index < 5; index += 1) expectProblem(await attempt(index, "wrong-password"), 401, "invalid_credentials");
      const limited = await attempt(5, "wrong-password");
      expectProblem(limited, 429, "rate_limited");
      expect(Number(limited.headers["retry-after"])).toBeGreaterThan(0);
      expect(Number(limited.headers["retry-after"])).toBeLessThanOrEqual(60);
      // While limited even the right password is not tried, so guessing gains nothing.
      expectProblem(await attempt(6, "long-enough-pw"), 429, "rate_limited");
      expectProblem(await attempt(7, "wrong-password", "DEV@example.test"), 429, "rate_limited");
      // Another account is not affected.
      expectProblem(await attempt(8, "wrong-password", "other@example.test"), 401, "invalid_credentials");
    });

    it("answers 403 not_a_developer for a user without a developer account", async () => {
      const user = await createUser();
      const response = await request(await testApp()).post("/api/v1/developers/auth/login").send({ email: user.email, password: user.password });
      expectProblem(response, 403, "not_a_developer");
    });

    it("answers 401 user_disabled for a disabled developer", async () => {
      const developer = await createDeveloper("acme");
      await (await testDeps()).auth.updateUser(developer.uid, { disabled: true });
      const response = await request(await testApp()).post("/api/v1/developers/auth/login").send({ email: developer.email, password: developer.password });
      expectProblem(response, 401, "user_disabled");
    });
  });

  describe("GET /developers/me", () => {
    it("answers the developer, 403 not_a_developer for other users, 401 without a token", async () => {
      const developer = await createDeveloper("acme");
      const app = await testApp();
      const me = await request(app).get("/api/v1/developers/me").set(bearer(developer));
      expect(me.status).toBe(200);
      expect(developerSchema.parse(me.body).publisherId).toBe("acme");
      expectProblem(await request(app).get("/api/v1/developers/me").set(bearer(await createUser())), 403, "not_a_developer");
      expectProblem(await request(app).get("/api/v1/developers/me"), 401, "unauthenticated");
    });
  });
});
