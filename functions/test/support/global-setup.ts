import { freePort, startLocalStack } from "../../../tools/local-stack";
import { generateModuleSigningKeys, throwawayServiceAccount } from "../../../tools/local-keys";
import { generateTufKey } from "../../src/core/tuf-keys";

/** The project the tests use: its own, so test runs never touch `npm start`'s demo data. */
export const TEST_PROJECT_ID = "demo-marketplace-test";

export default async function globalSetup(): Promise<void> {
  const projectId = process.env.TEST_PROJECT_ID ?? TEST_PROJECT_ID;
  const [firestore, auth, storage] = await Promise.all([freePort(), freePort(), freePort()]);
  const stack = await startLocalStack({ projectId, ports: { firestore, auth, storage } });
  (globalThis as { __localStack?: unknown }).__localStack = stack;
  // Test workers are started after this and inherit the environment.
  Object.assign(process.env, stack.env, {
    GCLOUD_PROJECT: projectId,
    TEST_PROJECT_ID: projectId,
    TEST_SERVICE_ACCOUNT: JSON.stringify(throwawayServiceAccount(projectId)),
    MODULE_SIGNING_KEYS: await generateModuleSigningKeys(),
    TUF_ONLINE_KEY: generateTufKey(),
  });
}
