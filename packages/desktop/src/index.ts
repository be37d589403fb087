/**
 * The desktop app's SDK (contract §29):
 *
 *   import { createClient } from "@marketplace/desktop";
 *   const marketplace = createClient({ apiBase, dataDir, appVersion: "2.4.0", platform: process.platform, auth: { getIdToken } });
 *   const { path } = await marketplace.install("acme.charts", { onProgress: ({ transferred, total }) => … });
 *   if ((await marketplace.verify("acme.charts")).ok) load(path);
 */
export { createClient, type DesktopClient, type DesktopClientOptions, type Entitlement, type InstalledModule, type InstallOptions, type Platform, type UpdateItem, type Verdict } from "./client";
export type { DesktopAuth, FirebaseOptions } from "./auth";
export { DesktopError } from "./errors";
export type { Progress } from "./packages";
