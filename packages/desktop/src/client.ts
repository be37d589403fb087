import { randomUUID } from "node:crypto";
import { renameSync, rmSync, mkdirSync } from "node:fs";
import path from "node:path";
import type { components } from "@marketplace/client";
import semver from "semver";
import { verifyActivationCertificate, type ActivationClaims } from "../../../docs/examples/verify-activation-certificate";
import { idTokenSource, type DesktopAuth, type FirebaseOptions } from "./auth";
import { clockGuard } from "./clock";
import { dataDirectory, type InstalledRecord, type State } from "./data-dir";
import { DesktopError, integrityFailed } from "./errors";
import { answerOf, transport } from "./http";
import { fetchFromUrl, trustedRepository, tufTarget, unpack, verifyBytes, type Progress } from "./packages";
import { trustStore } from "./trust";

export type Platform = "win32" | "darwin" | "linux";
export type Entitlement = components["schemas"]["UserProfile"]["entitlements"][number];
export type UpdateItem = components["schemas"]["ModuleUpdates"]["items"][number];

export interface DesktopClientOptions {
  /** The API's base URL, ending in /api/v1 (locally http://127.0.0.1:5001/api/v1). */
  apiBase: string;
  /** A folder of the app's own: what the SDK keeps (data-dir.ts lists it). */
  dataDir: string;
  /** The app's version (semver): chooses compatible module versions (§9). */
  appVersion: string;
  platform: Platform;
  auth: DesktopAuth;
  firebase?: FirebaseOptions;
  /** The TUF root metadata the app ships (the text of a `<N>.root.json`); without it, the service's 1.root.json is trusted on first use and kept. */
  tufRoot?: string;
  /** This device's id (1–128 of [A-Za-z0-9._:-]); by default one is made once and kept in dataDir. */
  deviceId?: string;
  /** For tests and proxies: the fetch to use, and the clock. */
  fetch?: typeof fetch;
  clock?: () => Date;
}

export interface InstalledModule {
  moduleId: string;
  version: string;
  /** The absolute folder holding the package's files, unpacked. */
  path: string;
}

export interface InstallOptions {
  /** A version to install; by default the one the service picks (install policy §26, fallback §27, compatibility §9). */
  version?: string;
  signal?: AbortSignal;
  onProgress?: (progress: Progress) => void;
}

export type Verdict = { ok: true } | { ok: false; code: string; reason: string };

/** Certificates expiring within this are renewed by refresh(). */
const RENEW_WITHIN_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * The desktop app's SDK (contract §29): one object that installs modules verified end to end,
 * keeps them working offline, updates and uninstalls them. Synchronous to create; nothing is
 * fetched until a call needs it.
 */
export function createClient(options: DesktopClientOptions) {
  const apiBase = options.apiBase.replace(/\/+$/, "");
  const fetchOnce = options.fetch ?? globalThis.fetch;
  const systemClock = options.clock ?? (() => new Date());
  const dir = dataDirectory(options.dataDir);
  const clock = clockGuard(dir, systemClock);
  const deviceId = dir.deviceId(options.deviceId);
  const token = idTokenSource(options.auth, options.firebase, fetchOnce, () => systemClock().getTime());
  const http = transport({ apiBase, fetch: fetchOnce, token });
  const trust = trustStore(dir, clock);
  let swept = false;
  /** One change of the installed modules at a time, so that two installs never write state.json over each other. */
  let changing: Promise<unknown> = Promise.resolve();
  const inTurn = <T>(work: () => Promise<T>): Promise<T> => {
    const run = changing.then(work, work);
    changing = run.catch(() => undefined);
    return run;
  };

  function state(): State {
    const current = dir.state();
    if (!swept) {
      // What a crashed install left (a staged or renamed folder that no record names) goes.
      dir.sweep(current);
      swept = true;
    }
    return current;
  }

  const installedView = (record: InstalledRecord): InstalledModule => ({ moduleId: record.moduleId, version: record.version, path: dir.at(record.folder) });

  /** The profile, with the trusted material it points at refreshed (keys, revocation lists, policies). */
  async function refreshTrust() {
    const profile = http.api.GET("/users/me").then(answerOf);
    await trust.refresh(http, profile);
    const { entitlements } = await profile;
    dir.writeAtomically(dir.at("trust", "entitlements.json"), JSON.stringify({ items: entitlements, fetchedAt: clock.now().toISOString() }));
    return profile;
  }

  async function checkCertificate(record: InstalledRecord, now: Date): Promise<ActivationClaims> {
    if (!record.certificate) throw new DesktopError("certificate_missing", `${record.moduleId} has no activation certificate for this device.`);
    return verifyActivationCertificate(record.certificate, trust.signingKeys(), { deviceId, moduleId: record.moduleId }, now);
  }

  /** Confirms the version on this device (§10); the typed client gives the POST its Idempotency-Key, which the retries keep. */
  async function confirm(moduleId: string, version: string): Promise<string> {
    const confirmed = answerOf(await http.api.POST("/modules/confirm", { body: { moduleId, version, deviceId, appVersion: options.appVersion, platform: options.platform } }));
    if (!confirmed.certificate) throw integrityFailed("The service confirmed the activation without a certificate.");
    const claims = await verifyActivationCertificate(confirmed.certificate, trust.signingKeys(), { deviceId, moduleId }, clock.now()).catch((error: Error) => {
      throw integrityFailed(`The activation certificate does not verify: ${error.message}`, error);
    });
    if (claims.version !== version) throw integrityFailed(`The activation certificate is for ${claims.version}, not ${version}.`);
    clock.sawSigned(claims.iat);
    return confirmed.certificate;
  }

  async function install(moduleId: string, install: InstallOptions = {}): Promise<InstalledModule> {
    const { signal } = install;
    clock.now();
    // The reads that do not depend on each other go together; the TUF repository is walked while
    // the rest is read (a private module's is not needed: the public repository does not list it).
    const modulePage = http.api.GET("/modules/{id}", { params: { path: { id: moduleId } } }).then(answerOf);
    const [profile, module, download, repository] = await Promise.all([
      refreshTrust(),
      modulePage,
      http.api
        .GET("/modules/download/{id}", {
          params: { path: { id: moduleId }, query: install.version ? { version: install.version } : { appVersion: options.appVersion } },
          signal,
        })
        .then(answerOf),
      modulePage.then((page) => (page.visibility === "public" ? trustedRepository({ http, apiBase, metadataDir: dir.at("tuf"), tufRoot: options.tufRoot, signal }) : null)),
    ]);
    const kept = state().installed[moduleId];
    const { version } = download;
    // Refused before a byte is fetched: a revoked version, and what a kept policy blocks (the service refuses both too).
    const revoked = await trust.revocationOf({ moduleId, version, sha256: download.sha256, businessId: module.businessId });
    if (revoked) throw new DesktopError("module_revoked", `${moduleId}@${version} was revoked: ${revoked.reason}`, { details: { reason: revoked.reason } });
    const policies = await trust.keptPolicies(profile.policies.map((policy) => policy.businessId));
    const blocked = trust.policyRefusal(policies.values(), { id: moduleId, publisherId: module.publisherId, businessId: module.businessId }, version);
    if (blocked) throw new DesktopError("blocked_by_policy", blocked.reason, { status: 403, details: blocked });

    if (kept && kept.version === version && kept.sha256 === download.sha256) {
      // Already installed: only its certificate is renewed.
      return inTurn(async () => {
        const certificate = await confirm(moduleId, version);
        const current = state();
        current.installed[moduleId] = { ...current.installed[moduleId], certificate };
        dir.saveState(current);
        return installedView(current.installed[moduleId]);
      });
    }

    // A public module's version must be the one the TUF repository signed (§23); a private one is not listed there (§26).
    const signedByTuf = repository ? await tufTarget(repository, moduleId, version) : null;
    if (repository && !signedByTuf) throw integrityFailed(`The TUF repository does not list ${moduleId}@${version} (yet): try again shortly.`);
    if (signedByTuf && (signedByTuf.sha256 !== download.sha256 || signedByTuf.length !== download.size)) {
      throw integrityFailed(`The download of ${moduleId}@${version} is not the package the TUF repository signed.`);
    }

    let transferred = 0;
    install.onProgress?.({ transferred, total: download.size });
    const bytes = await fetchFromUrl(http, download, (count) => install.onProgress?.({ transferred: (transferred += count), total: download.size }), signal);
    await verifyBytes(http, bytes, download, trust.signingKeys());

    return inTurn(async () => {
      // Unpacked beside the installed version, then moved into place: until the new record is
      // written, the old version is what is installed, whatever happens to this process.
      const staged = dir.stagingFolder();
      const folder = path.join("modules", moduleId, `${version}.${randomUUID().slice(0, 8)}`);
      try {
        await unpack(bytes, staged);
        if (signal?.aborted) throw new DesktopError("cancelled", "Cancelled.");
        mkdirSync(dir.at("modules", moduleId), { recursive: true });
        renameSync(staged, dir.at(folder));
        const certificate = await confirm(moduleId, version);
        const current = state();
        const previous = current.installed[moduleId];
        current.installed[moduleId] = { moduleId, version, sha256: download.sha256, folder, certificate, publisherId: module.publisherId, businessId: module.businessId };
        dir.saveState(current);
        if (previous && previous.folder !== folder) rmSync(dir.at(previous.folder), { recursive: true, force: true });
        return installedView(current.installed[moduleId]);
      } catch (error) {
        rmSync(staged, { recursive: true, force: true });
        if (state().installed[moduleId]?.folder !== folder) rmSync(dir.at(folder), { recursive: true, force: true });
        throw error;
      }
    });
  }

  return {
    deviceId,
    /** The typed client (@marketplace/client) with this user's token and the SDK's retries: every other call of the API. */
    api: http.api,

    /** The caller's effective entitlements (§3): online, else the last answer kept, until the newest kept certificate expires. */
    async entitlements(): Promise<{ items: Entitlement[]; fetchedAt: string; offline: boolean }> {
      const now = clock.now();
      try {
        const profile = answerOf(await http.api.GET("/users/me"));
        const fetchedAt = now.toISOString();
        dir.writeAtomically(dir.at("trust", "entitlements.json"), JSON.stringify({ items: profile.entitlements, fetchedAt }));
        return { items: profile.entitlements, fetchedAt, offline: false };
      } catch (error) {
        if (!(error instanceof DesktopError) || error.code !== "offline") throw error;
        const kept = dir.readJson<{ items: Entitlement[]; fetchedAt: string }>(dir.at("trust", "entitlements.json"));
        const until = await newestCertificateExpiry(now);
        if (!kept || until === null || until <= now.getTime()) throw error;
        return { ...kept, offline: true };
      }
    },

    /** The installed modules, as kept in dataDir. */
    installed(): InstalledModule[] {
      return Object.values(state().installed).map(installedView);
    },

    /** Online: the signing keys, signed policies and revocation lists; certificates expiring within 7 days are renewed. */
    async refresh(): Promise<void> {
      const now = clock.now();
      await refreshTrust();
      for (const record of Object.values(state().installed)) {
        const claims = await checkCertificate(record, now).catch(() => null);
        if (claims && claims.exp * 1000 - now.getTime() > RENEW_WITHIN_MS) continue;
        await inTurn(async () => {
          const certificate = await confirm(record.moduleId, record.version);
          const current = state();
          if (current.installed[record.moduleId]?.version !== record.version) return;
          current.installed[record.moduleId] = { ...current.installed[record.moduleId], certificate };
          dir.saveState(current);
        });
      }
    },

    install,

    /**
     * Offline: may this installed version load now? Its certificate (signature, this device, its
     * expiry, `maxVersion`, the policies it was issued under), the kept policies and revocation
     * lists, and the clock. Never throws for a refusal.
     */
    async verify(moduleId: string): Promise<Verdict> {
      const refuse = (code: string, reason: string): Verdict => ({ ok: false, code, reason });
      let now: Date;
      try {
        now = clock.now();
      } catch (error) {
        return refuse("clock_rollback", (error as Error).message);
      }
      let record: InstalledRecord | undefined;
      try {
        record = state().installed[moduleId];
      } catch (error) {
        return refuse("integrity_failed", (error as Error).message);
      }
      if (!record) return refuse("not_installed", `${moduleId} is not installed.`);
      let claims: ActivationClaims;
      try {
        claims = await checkCertificate(record, now);
      } catch (error) {
        const expired = (error as { code?: string }).code === "ERR_JWT_EXPIRED";
        return refuse(expired ? "certificate_expired" : "integrity_failed", `The activation certificate of ${moduleId} ${expired ? "has expired: go online to renew it" : `does not verify (${(error as Error).message})`}.`);
      }
      if (claims.version !== record.version) {
        return refuse("integrity_failed", `The activation certificate is for ${claims.version}, not the installed ${record.version}.`);
      }
      if (claims.maxVersion && semver.gt(record.version, claims.maxVersion)) {
        return refuse("fallback_version_exceeded", `Your licence keeps versions up to ${claims.maxVersion}; ${record.version} needs an active licence.`);
      }
      const issuedUnder = Object.entries(claims.policyVersions ?? {});
      const policies = await trust.keptPolicies(issuedUnder.map(([businessId]) => businessId));
      for (const [businessId, version] of issuedUnder) {
        const policy = policies.get(businessId);
        if (!policy || policy.version < version) return refuse("policy_outdated", `The install policy of ${businessId} kept here is older than the certificate's: go online to refresh.`);
      }
      const blocked = trust.policyRefusal(policies.values(), { id: moduleId, publisherId: record.publisherId, businessId: record.businessId }, record.version);
      if (blocked) return refuse("blocked_by_policy", blocked.reason);
      const revoked = await trust.revocationOf(record);
      if (revoked) return refuse("module_revoked", `${moduleId}@${record.version} was revoked: ${revoked.reason}`);
      return { ok: true };
    },

    /** §9's update check for what is installed: one item per module with a newer allowed version, or whose version is yanked or blocked. */
    async checkForUpdates(): Promise<UpdateItem[]> {
      clock.now();
      const installed = Object.values(state().installed).map(({ moduleId, version }) => ({ moduleId, version }));
      if (installed.length === 0) return [];
      const answer = answerOf(await http.api.POST("/modules/updates", { body: { appVersion: options.appVersion, installed, deviceId, platform: options.platform } }));
      return answer.items;
    },

    /** Installs the version the service offers now (the installed one stays until the new one verifies). */
    async update(moduleId: string, update: Omit<InstallOptions, "version"> = {}): Promise<InstalledModule> {
      if (!state().installed[moduleId]) throw new DesktopError("not_installed", `${moduleId} is not installed.`);
      return install(moduleId, update);
    },

    /** Frees this device's activation (§10) and deletes the module's files. */
    async uninstall(moduleId: string): Promise<void> {
      clock.now();
      const record = state().installed[moduleId];
      if (!record) throw new DesktopError("not_installed", `${moduleId} is not installed.`);
      const answer = await http.api.DELETE("/modules/activations/{moduleId}/devices/{deviceId}", { params: { path: { moduleId, deviceId } } });
      // Already freed (from another device, or an earlier uninstall that did not finish): nothing to undo.
      if (!answer.response.ok && (answer.error as { code?: string } | undefined)?.code !== "device_not_found") answerOf(answer);
      await inTurn(async () => {
        const current = state();
        delete current.installed[moduleId];
        dir.saveState(current);
        rmSync(dir.at("modules", moduleId), { recursive: true, force: true });
      });
    },
  };

  /** When the newest kept certificate expires (ms), or null with none. */
  async function newestCertificateExpiry(now: Date): Promise<number | null> {
    let newest: number | null = null;
    for (const record of Object.values(state().installed)) {
      const claims = await checkCertificate(record, now).catch(() => null);
      if (claims && (newest === null || claims.exp * 1000 > newest)) newest = claims.exp * 1000;
    }
    return newest;
  }
}

export type DesktopClient = ReturnType<typeof createClient>;
