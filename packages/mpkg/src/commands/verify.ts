import { readFile } from "node:fs/promises";
import type { Command } from "commander";
import type { JSONWebKeySet } from "jose";
import { inlineOrFile, readJson, type Cli } from "../cli";
import { unwrap, UsageError } from "../problems";
import { anonymousClient } from "../session";
import { assertNotRevoked, verifyActivationCertificate, verifyPackage, verifyRevocationList } from "../verify";

/** `verify`, `verify-certificate` and `verify-revocations`: what the desktop app checks, offline or with the API. */
export function registerVerifyCommands(program: Command, { apiOf, print }: Cli): void {
  const signingKeys = async (command: Command, file: string | undefined) =>
    file ? await readJson<JSONWebKeySet>(file) : (unwrap(await anonymousClient(apiOf(command)).GET("/signing-keys")) as JSONWebKeySet);
  /** A GET /revocations answer: saved in `file`, else fetched. */
  const revocations = async (command: Command, file: string | undefined) =>
    file ? await readJson<{ list?: unknown }>(file) : (unwrap(await anonymousClient(apiOf(command)).GET("/revocations")) as { list: string });

  program
    .command("verify")
    .description("check a downloaded package against its signature and the revocation list; offline with --jwks (and --revocations), else with the API")
    .argument("<file>", "the package")
    .requiredOption("--signature <jws>", "the signature (as GET /modules/download answers it), or @file holding it")
    .option("--jwks <file>", "a saved GET /signing-keys answer (no network)")
    .option("--revocations <file>", "a saved GET /revocations answer (with --jwks; without it, an offline check skips revocations and says so)")
    .action(async (file: string, options: { signature: string; jwks?: string; revocations?: string }, command: Command) => {
      const bytes = await readFile(file).catch(() => {
        throw new UsageError(`Cannot read '${file}'.`);
      });
      const signature = await inlineOrFile(options.signature);
      const jwks = await signingKeys(command, options.jwks);
      const signed = await verifyPackage(bytes, signature, jwks);
      // Offline (--jwks) without a saved list, revocations are not checked, and the answer says so.
      const answer = options.revocations || !options.jwks ? await revocations(command, options.revocations) : null;
      const checked = answer ? await assertNotRevoked(signed, revocationListOf(answer, options.revocations), jwks) : null;
      print(command, {
        valid: true,
        moduleId: signed.moduleId,
        version: signed.version,
        publisherId: signed.publisherId,
        sha256: signed.sha256,
        size: signed.size,
        revocationSerial: checked ? checked.serial : "not checked (offline without --revocations)",
      });
    });

  program
    .command("verify-certificate")
    .description("check an activation certificate as the desktop app does offline: signed by the marketplace, not expired, for this device and module")
    .argument("<certificate>", "the certificate (as POST /modules/confirm answers it), or @file holding it")
    .option("--jwks <file>", "a saved GET /signing-keys answer (no network)")
    .option("--device <deviceId>", "the device it must be for")
    .option("--module <moduleId>", "the module it must be for")
    .action(async (certificate: string, options: { jwks?: string; device?: string; module?: string }, command: Command) => {
      const jwks = await signingKeys(command, options.jwks);
      const claims = await verifyActivationCertificate(await inlineOrFile(certificate), jwks, { deviceId: options.device, moduleId: options.module });
      print(command, {
        valid: true,
        userId: claims.sub,
        moduleId: claims.moduleId,
        version: claims.version,
        deviceId: claims.deviceId,
        entitlement: claims.entitlement,
        issuedAt: new Date(claims.iat * 1000).toISOString(),
        expiresAt: new Date(claims.exp * 1000).toISOString(),
      });
    });

  program
    .command("verify-revocations")
    .description("check a revocation list as the desktop app does offline: signed by the marketplace, not expired, not older than the one you keep")
    .argument("[file]", "a saved GET /revocations answer (default: fetch it from the API)")
    .option("--jwks <file>", "a saved GET /signing-keys answer (no network)")
    .option("--kept-serial <n>", "the serial of the list you keep: an older list is refused as a replay")
    .action(async (file: string | undefined, options: { jwks?: string; keptSerial?: string }, command: Command) => {
      const keptSerial = options.keptSerial === undefined ? null : Number(options.keptSerial);
      if (keptSerial !== null && !Number.isInteger(keptSerial)) throw new UsageError("--kept-serial must be a whole number.");
      const answer = await revocations(command, file);
      const list = await verifyRevocationList(revocationListOf(answer, file), await signingKeys(command, options.jwks), keptSerial);
      print(command, {
        valid: true,
        serial: list.serial,
        issuedAt: new Date(list.iat * 1000).toISOString(),
        expiresAt: new Date(list.exp * 1000).toISOString(),
        entries: list.entries.map((entry) => ({ moduleId: entry.moduleId, version: entry.version, reason: entry.reason, revokedAt: entry.revokedAt })),
      });
    });
}

/** The signed list of a GET /revocations answer. */
function revocationListOf(answer: { list?: unknown }, file: string | undefined): string {
  if (typeof answer.list !== "string") throw new UsageError(`'${file}' is not a GET /revocations answer (no "list").`);
  return answer.list;
}
