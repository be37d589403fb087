import { readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { createInterface } from "node:readline";
import { Command, CommanderError } from "commander";
import type { JSONWebKeySet } from "jose";
import { printResult, uploadProgress } from "../../../tools/admin/output";
import { authorSignature, generateAuthorKey, readAuthorKey } from "./author-keys";
import { inspectPackageBytes, packageFileName, packDirectory } from "./pack";
import { ProblemError, unwrap, UsageError } from "./problems";
import { anonymousClient, DEFAULT_API, forgetLogin, publisherClient, saveLogin, type Env } from "./session";
import { uploadPackage } from "./upload";
import { assertNotRevoked, VerificationError, verifyActivationCertificate, verifyPackage, verifyRevocationList } from "./verify";

export interface Io {
  stdout: { write(text: string): unknown; isTTY?: boolean };
  stderr: { write(text: string): unknown; isTTY?: boolean };
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  env: Env;
}

interface GlobalOptions {
  api?: string;
  json?: boolean;
}

/**
 * `mpkg`, the publisher CLI (contract §12). Exit codes: 0 done; 1 the operation failed (the API
 * refused it, a signature does not verify, the network); 2 the command line or its input is
 * wrong (unknown option, a package the rules refuse, a 400/413/415/422 answer).
 */
export async function run(argv: string[], io: Io): Promise<number> {
  const program = new Command("mpkg")
    .description("Publish modules to the Marketplace: pack, publish, verify, yank; access tokens; author keys; download statistics.")
    .option("--api <url>", `the API's base URL, ending in /api/v1 (env MPKG_API; default ${DEFAULT_API})`)
    .option("--json", "print JSON instead of text")
    .exitOverride()
    .configureOutput({ writeOut: (text) => io.stdout.write(text), writeErr: (text) => io.stderr.write(text) })
    .showHelpAfterError("(add --help for usage)")
    .addHelpText(
      "after",
      `
Credentials: MPKG_TOKEN (a publisher access token mpt_…, or a trusted-publishing token mpo_…
from POST /developers/auth/oidc) for pack/publish/yank/stats in CI,
else the login saved by \`mpkg login\` (in $MPKG_CONFIG_DIR, else $XDG_CONFIG_HOME/mpkg or
~/.config/mpkg; \`mpkg logout\` forgets it). Exit codes: 0 done, 1 failed, 2 wrong command line or input.`,
    );

  const globals = (command: Command) => command.optsWithGlobals<GlobalOptions>();
  const apiOf = (command: Command) => (globals(command).api ?? io.env.MPKG_API ?? DEFAULT_API).replace(/\/+$/, "");
  const print = (command: Command, result: unknown) => printResult(result, { json: globals(command).json ?? false, out: io.stdout });
  const asPublisher = (command: Command, accessToken = true) => publisherClient(apiOf(command), io.env, { accessToken });

  program
    .command("pack")
    .description("check module.json with the service's rules and write <id>-<version>.mpkg (honours .mpkgignore)")
    .argument("[dir]", "the module's folder", ".")
    .option("--out <file>", "where to write the package (default ./<id>-<version>.mpkg)")
    .action(async (dir: string, options: { out?: string }, command: Command) => {
      const packed = await packDirectory(dir);
      const out = options.out ?? packageFileName(packed.manifest);
      await writeFile(out, packed.bytes);
      print(command, { file: out, moduleId: packed.manifest.id, version: packed.manifest.version, sha256: packed.sha256, size: packed.size, files: packed.files.length });
    });

  program
    .command("publish")
    .description("sign and publish a package (a .mpkg file, or a folder packed first)")
    .argument("[fileOrDir]", "a .mpkg file or a module folder", ".")
    .option("--sign-only", "upload and sign, but leave the version unpublished")
    .option("--key <file>", "sign the package with your author key (a JWK file of `mpkg keys generate`) as well")
    .action(async (target: string, options: { signOnly?: boolean; key?: string }, command: Command) => {
      const info = await stat(target).catch(() => null);
      if (!info) throw new UsageError(`No file or folder '${target}'.`);
      const packed = info.isDirectory() ? await packDirectory(target) : await inspectPackageBytes(await readFile(target), path.basename(target));
      const signature = options.key
        ? await authorSignature(options.key, { moduleId: packed.manifest.id, version: packed.manifest.version, sha256: packed.sha256 })
        : undefined;
      const { client, bearer } = await asPublisher(command);
      const progress = globals(command).json ? undefined : uploadProgress(io.stderr);
      const signed = (await uploadPackage(apiOf(command), bearer, packed.bytes, progress, signature)) as { moduleId: string; version: string; sha256: string; size: number };
      if (options.signOnly) return print(command, { ...signed, state: "signed" });
      unwrap(await client.POST("/developers/modules/publish", { body: { moduleId: signed.moduleId, version: signed.version } }));
      print(command, { moduleId: signed.moduleId, version: signed.version, sha256: signed.sha256, size: signed.size, state: "published" });
    });

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

  program
    .command("list")
    .description("your modules and their versions, with state and review")
    .action(async (_options: object, command: Command) => {
      const { client } = await asPublisher(command);
      const modules = unwrap(await client.GET("/developers/modules")).items;
      if (globals(command).json) return print(command, modules);
      print(
        command,
        modules.flatMap((module) =>
          module.versions.map((version) => ({
            moduleId: module.id,
            version: version.version,
            state: version.yankedAt ? "yanked" : version.state,
            review: version.review.state,
            revoked: version.revocation ? "yes" : "",
            downloads: version.version === module.latestVersion ? module.downloads : "",
          })),
        ),
      );
    });

  for (const [name, yanked] of [
    ["yank", true],
    ["unyank", false],
  ] as const) {
    const yankCommand = program
      .command(name)
      .description(yanked ? "withdraw a published version (never latest or compatible again; explicit downloads still work)" : "put a yanked version back")
      .argument("<moduleId>")
      .argument("<version>");
    if (yanked) yankCommand.option("--reason <text>", "why, for your users");
    yankCommand.action(async (moduleId: string, version: string, options: { reason?: string }, command: Command) => {
      const { client } = await asPublisher(command);
      const answer = yanked
        ? await client.POST("/developers/modules/yank", { body: { moduleId, version, ...(options.reason ? { reason: options.reason } : {}) } })
        : await client.POST("/developers/modules/unyank", { body: { moduleId, version } });
      print(command, unwrap(answer));
    });
  }

  const tokens = program.command("tokens").description("publisher access tokens for CI (need `mpkg login`)");
  tokens
    .command("create")
    .description("create a token; it is printed once: store it as the MPKG_TOKEN secret of your CI")
    .requiredOption("--name <name>", "what it is for, e.g. 'GitHub Actions'")
    .option("--expires-in-days <days>", "1-365 (default 90)")
    .action(async (options: { name: string; expiresInDays?: string }, command: Command) => {
      const expiresInDays = options.expiresInDays === undefined ? undefined : Number(options.expiresInDays);
      if (expiresInDays !== undefined && !Number.isInteger(expiresInDays)) throw new UsageError("--expires-in-days must be a whole number, e.g. 90.");
      const { client } = await asPublisher(command, false);
      print(command, unwrap(await client.POST("/developers/tokens", { body: { name: options.name, ...(expiresInDays !== undefined ? { expiresInDays } : {}) } })));
    });
  tokens
    .command("list")
    .description("your tokens (never their secrets)")
    .action(async (_options: object, command: Command) => {
      const { client } = await asPublisher(command, false);
      print(command, unwrap(await client.GET("/developers/tokens")).items);
    });
  tokens
    .command("revoke")
    .description("revoke a token at once")
    .argument("<id>", "the token's id (tok_…)")
    .action(async (id: string, _options: object, command: Command) => {
      const { client } = await asPublisher(command, false);
      const answer = await client.DELETE("/developers/tokens/{id}", { params: { path: { id } } });
      if (!answer.response.ok) unwrap(answer);
      print(command, { id, revoked: true });
    });

  const keys = program.command("keys").description("author keys: sign your packages yourself, on top of the marketplace's signature (need `mpkg login`)");
  keys
    .command("generate")
    .description("make a new Ed25519 key pair in a JWK file (owner-only permissions; keep it secret, back it up)")
    .argument("<file>", "where to write it, e.g. ~/.mpkg/author-key.json")
    .action(async (file: string, _options: object, command: Command) => {
      const key = await generateAuthorKey(file);
      print(command, { file: key.path, kid: key.kid, next: `mpkg keys add ${file} --name <name>` });
    });
  keys
    .command("add")
    .description("register the public half of a key file with your publisher (at most 10 active keys)")
    .argument("<file>", "a JWK file (only its public half is sent)")
    .requiredOption("--name <name>", "what the key is, e.g. 'release laptop'")
    .action(async (file: string, options: { name: string }, command: Command) => {
      const key = await readAuthorKey(file);
      const { client } = await asPublisher(command, false);
      print(command, unwrap(await client.POST("/developers/keys", { body: { name: options.name, publicKey: key.publicJwk } })));
    });
  keys
    .command("list")
    .description("your publisher's keys, revoked ones included")
    .action(async (_options: object, command: Command) => {
      const { client } = await asPublisher(command, false);
      print(command, unwrap(await client.GET("/developers/keys")).items);
    });
  keys
    .command("revoke")
    .description("revoke a key: packages signed with it are refused from now on")
    .argument("<kid>", "the key's id (as `keys list` shows it)")
    .action(async (kid: string, _options: object, command: Command) => {
      const { client } = await asPublisher(command, false);
      const answer = await client.DELETE("/developers/keys/{kid}", { params: { path: { kid } } });
      if (!answer.response.ok) unwrap(answer);
      print(command, { kid, revoked: true });
    });

  program
    .command("stats")
    .description("downloads of one of your modules per day and version (default: the last 30 days)")
    .argument("<moduleId>")
    .option("--from <YYYY-MM-DD>", "first day (UTC)")
    .option("--to <YYYY-MM-DD>", "last day (UTC), inclusive")
    .action(async (moduleId: string, options: { from?: string; to?: string }, command: Command) => {
      const { client } = await asPublisher(command);
      const stats = unwrap(await client.GET("/developers/modules/{id}/stats", { params: { path: { id: moduleId }, query: options } }));
      if (globals(command).json) return print(command, stats);
      print(command, {
        moduleId: stats.moduleId,
        from: stats.from,
        to: stats.to,
        total: stats.total,
        days: stats.days.map((day) => ({ date: day.date, downloads: day.downloads, versions: Object.entries(day.versions).map(([version, n]) => `${version}: ${n}`).join(", ") })),
      });
    });

  program
    .command("login")
    .description("sign in with email and password; keeps a refresh token in $MPKG_CONFIG_DIR, else your config folder ($XDG_CONFIG_HOME/mpkg or ~/.config/mpkg)")
    .option("--email <email>", "(asked for when missing)")
    .option("--password-stdin", "read the password from standard input (for scripts)")
    .action(async (options: { email?: string; passwordStdin?: boolean }, command: Command) => {
      const email = options.email ?? (await ask(io, "Email: ", false));
      const password = options.passwordStdin ? (await readAll(io.stdin)).replace(/\r?\n$/, "") : await ask(io, "Password: ", true);
      const api = apiOf(command);
      const session = unwrap(await anonymousClient(api).POST("/developers/auth/login", { body: { email, password } }));
      const file = await saveLogin(io.env, { api, email, refreshToken: session.refreshToken });
      print(command, { email, publisherId: session.developer.publisherId, credentials: file });
    });

  program
    .command("register")
    .description("create your marketplace account and publisher, and sign in (as `mpkg login` does)")
    .requiredOption("--publisher-id <id>", "your namespace: module ids will be <id>.<name> (3-32 of a-z, 0-9, '-')")
    .requiredOption("--display-name <name>", "the name users see")
    .option("--email <email>", "(asked for when missing)")
    .option("--password-stdin", "read the password from standard input (for scripts)")
    .action(async (options: { publisherId: string; displayName: string; email?: string; passwordStdin?: boolean }, command: Command) => {
      const email = options.email ?? (await ask(io, "Email: ", false));
      const password = options.passwordStdin ? (await readAll(io.stdin)).replace(/\r?\n$/, "") : await ask(io, "Password (8+ characters): ", true);
      const api = apiOf(command);
      const body = { email, password, displayName: options.displayName, publisherId: options.publisherId };
      const session = unwrap(await anonymousClient(api).POST("/developers/auth/register", { body }));
      if (!("refreshToken" in session) || session.refreshToken === null) throw new Error("The API made the account but did not sign in; run `mpkg login`.");
      const file = await saveLogin(io.env, { api, email, refreshToken: session.refreshToken });
      print(command, { email, publisherId: session.developer.publisherId, credentials: file });
    });

  program
    .command("logout")
    .description("forget the saved login")
    .action(async (_options: object, command: Command) => print(command, { loggedOut: await forgetLogin(io.env) }));

  try {
    await program.parseAsync(keyIdsAsOperands(argv), { from: "user" });
    return 0;
  } catch (error) {
    return exitCodeOf(error, io);
  }
}

/** A key id's shape: an RFC 7638 thumbprint, 43 characters of base64url. */
const KEY_ID = /^-[A-Za-z0-9_-]{42}$/;

/**
 * Key ids are base64url, so one in 32 starts with '-', and commander would take it for an
 * unknown option. A word of exactly a key id's shape (no option has it) is moved behind `--`,
 * where it can only be an operand, wherever it stood among the options.
 */
export function keyIdsAsOperands(argv: string[]): string[] {
  const end = argv.indexOf("--");
  const before = end === -1 ? argv : argv.slice(0, end);
  const after = end === -1 ? [] : argv.slice(end + 1);
  const ids = before.filter((word) => KEY_ID.test(word));
  return ids.length === 0 ? argv : [...before.filter((word) => !KEY_ID.test(word)), "--", ...ids, ...after];
}

async function readJson<T>(file: string): Promise<T> {
  const text = await readFile(file, "utf8").catch(() => {
    throw new UsageError(`Cannot read '${file}'.`);
  });
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new UsageError(`'${file}' is not JSON.`);
  }
}

/** The signed list of a GET /revocations answer. */
function revocationListOf(answer: { list?: unknown }, file: string | undefined): string {
  if (typeof answer.list !== "string") throw new UsageError(`'${file}' is not a GET /revocations answer (no "list").`);
  return answer.list;
}

/** A value given inline, or as @file. */
async function inlineOrFile(value: string): Promise<string> {
  if (!value.startsWith("@")) return value.trim();
  return (
    await readFile(value.slice(1), "utf8").catch(() => {
      throw new UsageError(`Cannot read '${value.slice(1)}'.`);
    })
  ).trim();
}

function exitCodeOf(error: unknown, io: Io): number {
  if (error instanceof CommanderError) {
    return ["commander.helpDisplayed", "commander.help", "commander.version"].includes(error.code) ? 0 : 2;
  }
  const unreachable = networkErrorCode(error);
  const message = unreachable
    ? `cannot reach the API (${unreachable}): is it running, and are --api / MPKG_API right?`
    : error instanceof Error
      ? error.message
      : String(error);
  io.stderr.write(`error: ${message}\n`);
  if (error instanceof UsageError) return 2;
  if (error instanceof ProblemError) return error.exitCode;
  if (error instanceof VerificationError) return 1;
  return 1;
}

/** The system error code of a failed connection (fetch wraps it in `cause`), if that is what this is. */
function networkErrorCode(error: unknown): string | null {
  const code = (error as { code?: unknown; cause?: { code?: unknown } }).cause?.code ?? (error as { code?: unknown }).code;
  return typeof code === "string" && /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|UND_ERR_\w+)$/.test(code) ? code : null;
}

function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on("data", (chunk: Buffer | string) => chunks.push(Buffer.from(chunk)));
    stream.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    stream.on("error", reject);
  });
}

/** Asks on the terminal; `secret` answers are not echoed. */
function ask(io: Io, question: string, secret: boolean): Promise<string> {
  if (!io.stdin.isTTY) throw new UsageError(secret ? "No terminal to ask the password on: use --password-stdin." : "No terminal to ask on: pass --email.");
  const output = io.stderr as NodeJS.WritableStream;
  const lines = createInterface({ input: io.stdin, output, terminal: true });
  if (secret) (lines as unknown as { _writeToOutput: (text: string) => void })._writeToOutput = (text) => void (text === question ? output.write(text) : undefined);
  return new Promise((resolve) =>
    lines.question(question, (answer) => {
      lines.close();
      if (secret) output.write("\n");
      resolve(answer);
    }),
  );
}
