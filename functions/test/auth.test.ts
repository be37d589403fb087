import request from "supertest";
import { bearer, createUser, expectProblem, resetEmulators, signIn, testApp, testDeps } from "./support/harness";

/** The authentication matrix, on a protected route. */
describe("Bearer authentication (GET /users/me)", () => {
  beforeEach(resetEmulators);

  it("answers 401 unauthenticated with WWW-Authenticate when there is no Authorization header", async () => {
    const response = await request(await testApp()).get("/api/v1/users/me");
    expectProblem(response, 401, "unauthenticated");
    expect(response.headers["www-authenticate"]).toBe("Bearer");
  });

  it.each(["Basic dXNlcjpwYXNz", "Bearer", "Bearer a b", "token abc"])(
    "answers 401 unauthenticated to the malformed header %p",
    async (header) => {
      const response = await request(await testApp()).get("/api/v1/users/me").set("Authorization", header);
      expectProblem(response, 401, "unauthenticated");
      expect(response.headers["www-authenticate"]).toBe("Bearer");
    },
  );

  it("answers 401 invalid_token to a token that is not a Firebase ID token", async () => {
    const response = await request(await testApp()).get("/api/v1/users/me").set("Authorization", "Bearer not.a.token");
    expectProblem(response, 401, "invalid_token");
    expect(response.headers["www-authenticate"]).toMatch(/^Bearer error="invalid_token"/);
  });

  it("answers 401 user_disabled once the account is disabled, even with a fresh token", async () => {
    const user = await createUser();
    await (await testDeps()).auth.updateUser(user.uid, { disabled: true });
    const response = await request(await testApp()).get("/api/v1/users/me").set(bearer(user));
    expectProblem(response, 401, "user_disabled");
  });

  it("answers 401 token_revoked for a token issued before its refresh tokens were revoked", async () => {
    const user = await createUser();
    // Revocation has a resolution of one second: make sure the revocation is after the sign-in.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await (await testDeps()).auth.revokeRefreshTokens(user.uid);
    const app = await testApp();
    expectProblem(await request(app).get("/api/v1/users/me").set(bearer(user)), 401, "token_revoked");
    // Signing in again gives a token that works.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const fresh = await signIn(user.email, user.password);
    expect((await request(app).get("/api/v1/users/me").set("Authorization", `Bearer ${fresh}`)).status).toBe(200);
  });

  it("answers 401 invalid_token for the token of a deleted account", async () => {
    const user = await createUser();
    await (await testDeps()).auth.deleteUser(user.uid);
    expectProblem(await request(await testApp()).get("/api/v1/users/me").set(bearer(user)), 401, "invalid_token");
  });

  it("checks revocation in full on every write, and on reads from an account state at most REVOCATION_CHECK_SECONDS old", async () => {
    // Against the emulator the Admin SDK checks revocation whatever it is asked, so the spies (which
    // pass through to the emulator) pin what the service asks for in production.
    const { auth } = await testDeps();
    const verify = jest.spyOn(auth, "verifyIdToken");
    const lookups = jest.spyOn(auth, "getUser");
    // Auth work for one user over three reads, with verified tokens and account states kept for `revocationCheckMs`.
    const authWorkOverThreeReads = async (revocationCheckMs: number) => {
      const user = await createUser();
      const app = await testApp({ config: { revocationCheckMs } });
      lookups.mockClear();
      verify.mockClear();
      for (let i = 0; i < 3; i += 1) expect((await request(app).get("/api/v1/users/me").set(bearer(user))).status).toBe(200);
      const verifications = verify.mock.calls.filter(([token]) => token === user.idToken);
      expect(verifications.every(([, checkRevoked]) => checkRevoked === false)).toBe(true);
      // Against the emulator every verification looks the user up too; the rest are the service's own.
      const ownLookups = lookups.mock.calls.filter(([uid]) => uid === user.uid).length - verifications.length;
      return { user, app, verifications: verifications.length, ownLookups };
    };
    try {
      const kept = await authWorkOverThreeReads(60_000);
      expect({ verifications: kept.verifications, ownLookups: kept.ownLookups }).toEqual({ verifications: 1, ownLookups: 1 });
      const fresh = await authWorkOverThreeReads(0);
      expect({ verifications: fresh.verifications, ownLookups: fresh.ownLookups }).toEqual({ verifications: 3, ownLookups: 3 });
      verify.mockClear();
      await request(kept.app).post("/api/v1/modules/confirm").set(bearer(kept.user)).send({ moduleId: "acme.none" });
      expect(verify).toHaveBeenCalledWith(kept.user.idToken, true);
    } finally {
      verify.mockRestore();
      lookups.mockRestore();
    }
  });

  it("refuses a disabled account on writes at once, and on reads once the account state is re-read", async () => {
    const { auth } = await testDeps();
    const user = await createUser();
    const app = await testApp({ config: { revocationCheckMs: 60_000 } });
    expect((await request(app).get("/api/v1/users/me").set(bearer(user))).status).toBe(200);
    await auth.updateUser(user.uid, { disabled: true });
    expectProblem(await request(app).post("/api/v1/modules/confirm").set(bearer(user)).send({ moduleId: "acme.none" }), 401, "user_disabled");
    // A new instance (or this one after the bound) reads the account again.
    const fresh = await testApp({ config: { revocationCheckMs: 0 } });
    expectProblem(await request(fresh).get("/api/v1/users/me").set(bearer(user)), 401, "user_disabled");
  });

  it("accepts a valid token, case-insensitively on the scheme", async () => {
    const user = await createUser();
    const response = await request(await testApp()).get("/api/v1/users/me").set("Authorization", `bearer ${user.idToken}`);
    expect(response.status).toBe(200);
    expect(response.body.uid).toBe(user.uid);
  });
});
