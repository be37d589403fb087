import { createClient } from "../../../packages/desktop/src";

/**
 * A desktop app's process that updates one module, for the crash test: it prints each step, and
 * the test kills it (SIGKILL) where it chooses.
 */
const [apiBase, dataDir, email, password, moduleId] = process.argv.slice(2);
const client = createClient({
  apiBase,
  dataDir,
  appVersion: "2.0.0",
  platform: "linux",
  auth: { email, password },
  firebase: { apiKey: "test-api-key", authEmulatorHost: process.env.FIREBASE_AUTH_EMULATOR_HOST },
});
client
  .update(moduleId, { onProgress: ({ transferred, total }) => console.log(`progress ${transferred}/${total}`) })
  .then((installed) => console.log(`installed ${installed.version}`))
  .catch((error: Error) => {
    console.error(error);
    process.exitCode = 1;
  });
