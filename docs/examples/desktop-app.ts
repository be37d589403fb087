import { createHash } from "node:crypto";
import { createMarketplaceClient } from "@marketplace/client";
import { compactVerify, createLocalJWKSet } from "jose";
import { verifyActivationCertificate } from "./verify-activation-certificate";

/**
 * Installs (or updates) a module as the desktop app does: the version for this app, its bytes
 * checked against the signed hash, then the activation on this device with its offline
 * certificate. Keep `jwks` and `certificate` for offline starts.
 */
export async function installModule(options: { baseUrl: string; idToken: () => Promise<string>; moduleId: string; appVersion: string; deviceId: string }) {
  const { moduleId, appVersion, deviceId } = options;
  const api = createMarketplaceClient({ baseUrl: options.baseUrl, token: options.idToken });

  const keys = await api.GET("/signing-keys");
  if (!keys.data) throw new Error(`signing keys: ${keys.error?.detail}`);
  const download = await api.GET("/modules/download/{id}", { params: { path: { id: moduleId }, query: { appVersion } } });
  if (!download.data) throw new Error(`${download.error?.code}: ${download.error?.detail}`); // e.g. not_entitled, no_compatible_version

  const bytes = Buffer.from(await (await fetch(download.data.url)).arrayBuffer());
  const { payload } = await compactVerify(download.data.signature, createLocalJWKSet(keys.data));
  const signed = JSON.parse(new TextDecoder().decode(payload)) as { moduleId: string; version: string; sha256: string };
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  if (signed.moduleId !== moduleId || signed.sha256 !== sha256) throw new Error("The package is not the one the marketplace signed.");

  const confirmed = await api.POST("/modules/confirm", { body: { moduleId, version: signed.version, deviceId } });
  if (!confirmed.data?.certificate) throw new Error(`${confirmed.error?.code}: ${confirmed.error?.detail}`); // e.g. device_limit_reached
  const claims = await verifyActivationCertificate(confirmed.data.certificate, keys.data, { deviceId, moduleId });
  return { version: signed.version, bytes, jwks: keys.data, certificate: confirmed.data.certificate, usableOfflineUntil: new Date(claims.exp * 1000) };
}
