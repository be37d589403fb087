// A desktop app's use of the SDK, as a small Node program against `npm start`:
//   node docs/examples/desktop-app/main.mjs install    # signs in, lists modules, installs contoso.charts 1.0.0
//   node docs/examples/desktop-app/main.mjs verify     # may it load? (works with the stack stopped)
//   node docs/examples/desktop-app/main.mjs update     # to the newest version this app may run
//   node docs/examples/desktop-app/main.mjs uninstall  # frees this device's activation, deletes the files
import { createClient, DesktopError } from "@marketplace/desktop";

const marketplace = createClient({
  apiBase: process.env.MARKETPLACE_API ?? "http://127.0.0.1:5001/api/v1",
  dataDir: process.env.MARKETPLACE_DATA ?? ".local/desktop-app",
  appVersion: "1.10.0",
  platform: process.platform === "win32" || process.platform === "darwin" ? process.platform : "linux",
  // The README's demo user, signed in through the Auth emulator; an app passes { getIdToken } from its own sign-in.
  auth: { email: "alice@example.com", password: "marketplace-demo" },
  firebase: { apiKey: "local", authEmulatorHost: process.env.FIREBASE_AUTH_EMULATOR_HOST ?? "127.0.0.1:9099" },
});

const moduleId = "contoso.charts";
const steps = {
  async install() {
    const { data } = await marketplace.api.GET("/modules", { params: { query: { appVersion: "1.10.0" } } });
    for (const item of data?.items ?? []) console.log(`${item.id.padEnd(20)} ${item.latestVersion}  ${item.name}`);
    const installed = await marketplace.install(moduleId, {
      version: "1.0.0",
      onProgress: ({ transferred, total }) => process.stdout.write(`\rdownloading ${transferred} of ${total} bytes`),
    });
    console.log(`\ninstalled ${installed.moduleId}@${installed.version} in ${installed.path}`);
  },
  async verify() {
    console.log(marketplace.installed());
    console.log(await marketplace.verify(moduleId)); // { ok: true }, or { ok: false, code, reason }
  },
  async update() {
    console.log(await marketplace.checkForUpdates());
    const updated = await marketplace.update(moduleId);
    console.log(`now ${updated.moduleId}@${updated.version} in ${updated.path}`);
  },
  async uninstall() {
    await marketplace.uninstall(moduleId);
    console.log(marketplace.installed()); // []
  },
};

const step = steps[process.argv[2]];
if (!step) {
  console.error(`usage: main.mjs ${Object.keys(steps).join("|")}`);
  process.exit(2);
}
try {
  await step();
} catch (error) {
  if (!(error instanceof DesktopError)) throw error;
  console.error(`${error.code}: ${error.message}`); // e.g. offline, integrity_failed, blocked_by_policy, device_limit_reached
  process.exitCode = 1;
}
