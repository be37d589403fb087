/**
 * Shared test plumbing: the app on the emulators started by global-setup, users with real ID
 * tokens from the Auth emulator, and clean-up between tests. Nothing here mocks Firebase.
 */
import { deleteApp, getApp, getApps } from "firebase-admin/app";
import { getStorage } from "firebase-admin/storage";
import type { Express } from "express";
import request, { type Response } from "supertest";
import { createApp } from "../../src/app";
import { stopListeners } from "../../src/core/listeners";
import type { Config } from "../../src/config";
import { silentLogger, type Logger } from "../../src/core/logger";
import type { Deps } from "../../src/deps";
import { localDeps } from "../../src/local";
import type { PackageEntry } from "../../../packages/mpkg/src/archive";
import { modulePackage } from "./packages";

export const projectId = process.env.TEST_PROJECT_ID!;
const authHost = process.env.FIREBASE_AUTH_EMULATOR_HOST!;
const firestoreHost = process.env.FIRESTORE_EMULATOR_HOST!;

let depsPromise: Promise<Deps> | undefined;

export function testDeps(): Promise<Deps> {
  depsPromise ??= localDeps({
    serviceAccount: JSON.parse(process.env.TEST_SERVICE_ACCOUNT!),
    env: process.env,
    logger: silentLogger,
    appName: "test",
  });
  return depsPromise;
}

/** The operations' dependencies as the operator CLI gives them: named operator for the audit log. */
export async function operatorDeps() {
  return { ...(await testDeps()), actor: { kind: "operator" as const, id: "ops@example.test" } };
}

afterAll(async () => {
  // Listeners first, while this file's modules are still loaded: their streams end cleanly.
  stopListeners();
  await new Promise((resolve) => setTimeout(resolve, 200));
  await Promise.all(getApps().map((app) => deleteApp(app)));
});

let otherInstance: Promise<Deps> | undefined;

/**
 * The dependencies of a second function instance: its own Admin SDK app and Firestore client, so
 * nothing kept in one instance's memory (caches, per-instance queues) is shared with testDeps'.
 */
export function otherInstanceDeps(): Promise<Deps> {
  otherInstance ??= localDeps({
    serviceAccount: JSON.parse(process.env.TEST_SERVICE_ACCOUNT!),
    env: process.env,
    logger: silentLogger,
    appName: "test-other-instance",
  });
  return otherInstance;
}

/** The app as a second function instance would run it (otherInstanceDeps). */
export async function otherInstanceApp(options: AppOptions = {}) {
  return createApp(withOptions(await otherInstanceDeps(), options));
}

export interface AppOptions {
  config?: Partial<Config>;
  clock?: () => Date;
  logger?: Logger;
}

/** The real app on the emulators, with optional overrides of configuration, clock or logger. */
export async function testApp(options: AppOptions = {}) {
  return createApp(withOptions(await testDeps(), options));
}

const withOptions = (deps: Deps, options: AppOptions): Deps => ({
  ...deps,
  config: { ...deps.config, ...options.config },
  clock: options.clock ?? deps.clock,
  logger: options.logger ?? deps.logger,
});

/** The test project's default bucket, for arranging and inspecting objects directly. */
export async function testBucket() {
  const { config } = await testDeps();
  return getStorage(getApp("test")).bucket(config.storageBucket);
}

/** Empties Firestore, Auth and Storage of the test project. */
export async function resetEmulators(): Promise<void> {
  const bucket = await testBucket();
  await Promise.all([
    fetch(`http://${firestoreHost}/emulator/v1/projects/${projectId}/databases/(default)/documents`, { method: "DELETE" }),
    fetch(`http://${authHost}/emulator/v1/projects/${projectId}/accounts`, { method: "DELETE" }),
    bucket.deleteFiles({ force: true }),
  ]);
}

let userCounter = 0;

export interface TestUser {
  uid: string;
  email: string;
  password: string;
  idToken: string;
}

/** A user in the Auth emulator, signed in with a password, with a real (unsigned) ID token. */
export async function createUser(options: { displayName?: string; email?: string } = {}): Promise<TestUser> {
  const { auth } = await testDeps();
  userCounter += 1;
  const email = options.email ?? `user${userCounter}-${Date.now()}@example.test`;
  const password = "correct-horse-battery";
  const record = await auth.createUser({ email, password, displayName: options.displayName });
  return { uid: record.uid, email, password, idToken: await signIn(email, password) };
}

export async function signIn(email: string, password: string): Promise<string> {
  const response = await fetch(
    `http://${authHost}/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=test-api-key`,
    {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password, returnSecureToken: true }),
    },
  );
  const body = (await response.json()) as { idToken?: string };
  if (!body.idToken) throw new Error(`Sign-in failed: ${JSON.stringify(body)}`);
  return body.idToken;
}

/**
 * Signs in through a SAML or OIDC provider on the Auth emulator (accounts:signInWithIdp takes any
 * `saml.*` or `oidc.*` id with no configuration): the ID token's `firebase.sign_in_provider` is it.
 */
export async function signInThroughProvider(providerId: string, email: string): Promise<TestUser> {
  const claims = JSON.stringify({ sub: `idp-${email}`, email, email_verified: true });
  const response = await fetch(`http://${authHost}/identitytoolkit.googleapis.com/v1/accounts:signInWithIdp?key=test-api-key`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ postBody: `id_token=${encodeURIComponent(claims)}&providerId=${providerId}`, requestUri: "http://localhost", returnSecureToken: true, returnIdpCredential: true }),
  });
  const body = (await response.json()) as { idToken?: string; localId?: string };
  if (!body.idToken || !body.localId) throw new Error(`Sign-in through ${providerId} failed: ${JSON.stringify(body)}`);
  return { uid: body.localId, email, password: "", idToken: body.idToken };
}

export const bearer = (user: { idToken: string }) => ({ Authorization: `Bearer ${user.idToken}` });

/** Asserts an RFC 9457 problem response with the contract's code; answers its body, for its extensions. */
export function expectProblem(response: Response, status: number, code: string): Record<string, unknown> {
  expect({ status: response.status, code: response.body?.code }).toEqual({ status, code });
  expect(response.headers["content-type"]).toMatch(/^application\/problem\+json/);
  expect(response.body).toEqual(
    expect.objectContaining({
      type: "about:blank",
      title: expect.any(String),
      status,
      code,
      requestId: response.headers["x-request-id"],
    }),
  );
  return response.body;
}

export interface TestDeveloper extends TestUser {
  publisherId: string;
}

/** A user turned developer through the API (the Bearer-token form of register). */
export async function createDeveloper(publisherId: string): Promise<TestDeveloper> {
  const user = await createUser();
  const response = await request(await testApp())
    .post("/api/v1/developers/auth/register")
    .set(bearer(user))
    .send({ displayName: `Dev ${publisherId}`, publisherId });
  if (response.status !== 201) throw new Error(`register failed: ${JSON.stringify(response.body)}`);
  return { ...user, publisherId };
}

/** Declares `who`'s publisher a trader (§30), as a publisher must before its first price. */
export async function declareTrader(who: { idToken: string }, through?: Express): Promise<void> {
  const response = await request(through ?? (await testApp()))
    .put("/api/v1/developers/trader")
    .set(bearer(who))
    .send({ trader: true, name: "Example Trading Ltd", address: "1 Example Street, 10115 Berlin, Germany", email: "sales@example.test", phone: "+49 30 1234567", selfCertification: true });
  if (response.status !== 200) throw new Error(`trader declaration failed: ${JSON.stringify(response.body)}`);
}

/** `POST /developers/modules/sign` of a package's bytes, as `who`: the answer, whatever it is. */
export const signRequest = (app: Express, who: { idToken: string }, bytes: Buffer) =>
  request(app).post("/api/v1/developers/modules/sign").set(bearer(who)).set("Content-Type", "application/octet-stream").send(bytes);

/** Signs and publishes a package of `manifest` (and `files`, e.g. a README) through the API (through `through`: an app with another clock, say); returns its bytes. */
export async function publishModule(developer: TestDeveloper, manifest: Record<string, unknown>, files: PackageEntry[] = [], through?: Express): Promise<Buffer> {
  const app = through ?? (await testApp());
  const bytes = await modulePackage(manifest, files);
  const signed = await signRequest(app, developer, bytes);
  if (signed.status !== 201) throw new Error(`sign failed: ${JSON.stringify(signed.body)}`);
  const published = await request(app).post("/api/v1/developers/modules/publish").set(bearer(developer)).send({ moduleId: manifest.id, version: manifest.version });
  if (published.status !== 200) throw new Error(`publish failed: ${JSON.stringify(published.body)}`);
  return bytes;
}

/** Object names under a prefix of the test bucket. */
export async function storedObjects(prefix: string): Promise<string[]> {
  const [files] = await (await testBucket()).getFiles({ prefix });
  return files.map((file) => file.name).sort();
}

/**
 * Sends concurrent requests as a client would: all at once, then those answered 503 "retry later"
 * again, all at once, at most 5 more rounds. Under the emulator's locks, two instances'
 * transactions on the same documents can hold each other until one passes its deadline: that
 * request answers 503 having written nothing, which is a contract answer, not a count gone wrong.
 * Each 503 is checked to be `unavailable`; answers in the order of `count`'s indexes.
 */
export async function sendRetryingUnavailable(count: number, send: (index: number) => Promise<Response>): Promise<Response[]> {
  const answers = await Promise.all(Array.from({ length: count }, (_, index) => send(index)));
  for (let round = 0; round < 5 && answers.some((answer) => answer.status === 503); round += 1) {
    const retried = answers.flatMap((answer, index) => (answer.status === 503 ? [index] : []));
    expect(retried.map((index) => answers[index].body.code)).toEqual(retried.map(() => "unavailable"));
    const again = await Promise.all(retried.map(send));
    retried.forEach((index, at) => (answers[index] = again[at]));
  }
  return answers;
}

/**
 * Folds what the changes so far counted into the analytics' month documents (§28), as the
 * deployment's `metricFold` does every minute (analytics.test runs that exported function itself).
 */
export async function foldCounts(): Promise<void> {
  const { foldCounts: fold } = await import("../../src/analytics/count-folder");
  await fold((await testDeps()).db);
}

/**
 * Runs the exported `scimDirectorySweep` as Cloud Scheduler would: deleted SCIM groups leave their
 * members, and members follow changed SCIM settings (§25), as the deployment's trigger and sweep do.
 */
export async function sweepDirectoryJobs(): Promise<void> {
  const [{ scimDirectorySweep }, { cloudLogger }] = await Promise.all([import("../../src/index"), import("../../src/core/logger")]);
  // The deployed function logs to Cloud Logging (structured lines on stdout): kept out of the test's output.
  const logged = jest.spyOn(cloudLogger, "info").mockImplementation(() => undefined);
  try {
    await scimDirectorySweep.run({ scheduleTime: new Date().toISOString(), jobName: "scimDirectorySweep" } as Parameters<typeof scimDirectorySweep.run>[0]);
  } finally {
    logged.mockRestore();
  }
}

/** Asks until `check` passes, for at most `timeoutMs` (§13's 2 s by default); fails with its last error otherwise. */
export async function eventually(check: () => Promise<void>, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() >= deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}
