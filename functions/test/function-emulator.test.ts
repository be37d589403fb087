import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ensureFunctionsLocalFiles, startFunctionsEmulator, type FunctionsEmulator } from "../../tools/functions-emulator";
import { freePort } from "../../tools/local-stack";
import { sha256Hex } from "./support/fixtures";
import { createUser, projectId, resetEmulators } from "./support/harness";
import { modulePackage } from "./support/packages";
import { signed as signedStripeDelivery, subscriptionEvent } from "./support/stripe-events";

/**
 * What `firebase deploy` ships, run by the Functions emulator the way `npm run functions` runs
 * it: the compiled `lib/`, discovered through a firebase.json, with its params and secret, talking
 * to the test run's Firestore, Auth and Storage emulators.
 */
describe("the deployable function in the Functions emulator", () => {
  let emulator: FunctionsEmulator | undefined;
  let written: string[] = [];
  const workDir = mkdtempSync(path.join(tmpdir(), "marketplace-functions-"));

  beforeAll(resetEmulators);
  afterAll(async () => {
    await emulator?.stop();
    for (const file of written) rmSync(file, { force: true });
    rmSync(workDir, { recursive: true, force: true });
  });

  it("loads lib/ and serves /api/v1 through the api function, on the local emulators", async () => {
    // Only files this test created are removed afterwards; a developer's own stay.
    written = ensureFunctionsLocalFiles(process.env.MODULE_SIGNING_KEYS!, `${projectId}.appspot.com`).created;
    const emulatorEnv = Object.fromEntries(
      ["FIRESTORE_EMULATOR_HOST", "FIREBASE_AUTH_EMULATOR_HOST", "STORAGE_EMULATOR_HOST", "FIREBASE_STORAGE_EMULATOR_HOST"].map((name) => [name, process.env[name]!]),
    );
    emulator = await startFunctionsEmulator({
      projectId,
      port: await freePort(),
      emulatorEnv,
      serviceAccount: JSON.parse(process.env.TEST_SERVICE_ACCOUNT!),
      workDir,
    });
    const base = emulator.apiBase;

    const keys = await fetch(`${base}/signing-keys`);
    expect(keys.status).toBe(200);
    expect(((await keys.json()) as { keys: unknown[] }).keys.length).toBeGreaterThanOrEqual(1);

    const unknown = await fetch(`${base}/nope`);
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get("content-type")).toMatch(/^application\/problem\+json/);

    // Auth, Firestore and Storage through the function: register, sign, publish, download.
    const user = await createUser();
    const json = (token: string, body: unknown) => ({
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const registered = await fetch(`${base}/developers/auth/register`, json(user.idToken, { displayName: "Smoke", publisherId: "smoke" }));
    expect(registered.status).toBe(201);
    const bytes = await modulePackage({ id: "smoke.module" });
    const signed = await fetch(`${base}/developers/modules/sign`, {
      method: "POST",
      headers: { Authorization: `Bearer ${user.idToken}`, "content-type": "application/octet-stream" },
      body: bytes,
    });
    expect(signed.status).toBe(201);
    expect(((await signed.json()) as { sha256: string }).sha256).toBe(sha256Hex(bytes));
    const published = await fetch(`${base}/developers/modules/publish`, json(user.idToken, { moduleId: "smoke.module", version: "1.0.0" }));
    expect(published.status).toBe(200);

    const download = await fetch(`${base}/modules/download/smoke.module`, { headers: { Authorization: `Bearer ${user.idToken}` } });
    expect(download.status).toBe(200);
    const { url } = (await download.json()) as { url: string };
    expect(sha256Hex(await (await fetch(url)).arrayBuffer())).toBe(sha256Hex(bytes));

    // The Stripe webhook verifies the bytes the Functions Framework read (req.rawBody), with the local secret.
    const { payload, header } = signedStripeDelivery(subscriptionEvent({ businessId: "smoke-co" }));
    const delivered = await fetch(`${base}/billing/stripe/webhook`, { method: "POST", headers: { "content-type": "application/json", "stripe-signature": header }, body: payload });
    expect({ status: delivered.status, body: await delivered.json() }).toEqual({ status: 200, body: expect.objectContaining({ outcome: "applied" }) });
    const forged = await fetch(`${base}/billing/stripe/webhook`, { method: "POST", headers: { "content-type": "application/json", "stripe-signature": header }, body: payload.replace("smoke-co", "other-co") });
    expect(forged.status).toBe(400);
  }, 300_000);
});
