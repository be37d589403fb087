import { execFileSync } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

/**
 * Real private keys in every text form a package could leak them in (contract §14), made fresh at
 * each run: node:crypto's PKCS#8 (plain and encrypted), PKCS#1 and SEC1 for every key type it
 * has; ssh-keygen's OpenSSH, PEM and PKCS#8 files; a PGP secret key block from gpg; PuTTY files
 * from puttygen; and the same keys as a JSON string with `\n` escapes. `.ci/run` installs the
 * three programs where the machine lacks them.
 */
export interface PrivateKeySample {
  kind: string;
  text: string;
}

const PASSPHRASE = "correct horse battery staple";

function nodeCryptoKeys(): PrivateKeySample[] {
  const pairs = {
    rsa: generateKeyPairSync("rsa", { modulusLength: 2048 }),
    "rsa-pss": generateKeyPairSync("rsa-pss", { modulusLength: 2048 }),
    dsa: generateKeyPairSync("dsa", { modulusLength: 2048, divisorLength: 256 }),
    ec: generateKeyPairSync("ec", { namedCurve: "P-256" }),
    ed25519: generateKeyPairSync("ed25519"),
    ed448: generateKeyPairSync("ed448"),
    x25519: generateKeyPairSync("x25519"),
    x448: generateKeyPairSync("x448"),
  };
  const samples = Object.entries(pairs).flatMap(([type, { privateKey }]) => [
    { kind: `${type} PKCS#8`, text: privateKey.export({ type: "pkcs8", format: "pem" }) as string },
    { kind: `${type} encrypted PKCS#8`, text: privateKey.export({ type: "pkcs8", format: "pem", cipher: "aes-256-cbc", passphrase: PASSPHRASE }) as string },
  ]);
  samples.push(
    { kind: "rsa PKCS#1", text: pairs.rsa.privateKey.export({ type: "pkcs1", format: "pem" }) as string },
    { kind: "rsa encrypted PKCS#1", text: pairs.rsa.privateKey.export({ type: "pkcs1", format: "pem", cipher: "aes-128-cbc", passphrase: PASSPHRASE }) as string },
    { kind: "ec SEC1", text: pairs.ec.privateKey.export({ type: "sec1", format: "pem" }) as string },
    { kind: "ed25519 PKCS#8 in a JSON string", text: JSON.stringify({ type: "service_account", private_key: pairs.ed25519.privateKey.export({ type: "pkcs8", format: "pem" }) }) },
    { kind: "x25519 encrypted PKCS#8 in a JSON string", text: JSON.stringify({ key: pairs.x25519.privateKey.export({ type: "pkcs8", format: "pem", cipher: "aes-256-cbc", passphrase: PASSPHRASE }) }) },
  );
  return samples;
}

function run(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): void {
  execFileSync(command, args, { stdio: "ignore", timeout: 60_000, ...options });
}

function sshKeygenKeys(dir: string): PrivateKeySample[] {
  const make = (kind: string, args: string[]) => {
    const file = path.join(dir, `ssh-${kind.replace(/\W+/g, "-")}`);
    run("ssh-keygen", ["-q", "-f", file, "-C", "dev@example.com", ...args]);
    return { kind: `ssh-keygen ${kind}`, text: readFileSync(file, "utf8") };
  };
  return [
    make("ed25519 OpenSSH", ["-t", "ed25519", "-N", ""]),
    make("ed25519 OpenSSH with passphrase", ["-t", "ed25519", "-N", PASSPHRASE]),
    make("rsa OpenSSH", ["-t", "rsa", "-b", "2048", "-N", ""]),
    make("ecdsa OpenSSH", ["-t", "ecdsa", "-N", ""]),
    make("rsa PEM", ["-t", "rsa", "-b", "2048", "-m", "PEM", "-N", ""]),
    make("rsa PEM with passphrase", ["-t", "rsa", "-b", "2048", "-m", "PEM", "-N", PASSPHRASE]),
    make("ecdsa PKCS#8", ["-t", "ecdsa", "-m", "PKCS8", "-N", ""]),
  ];
}

function gpgKey(dir: string): PrivateKeySample {
  const home = path.join(dir, "gnupg");
  const env = { ...process.env, GNUPGHOME: home };
  execFileSync("mkdir", ["-m", "700", "-p", home]);
  run("gpg", ["--batch", "--pinentry-mode", "loopback", "--passphrase", "", "--quick-gen-key", "Dev <dev@example.com>", "ed25519", "sign", "never"], { env });
  const text = execFileSync("gpg", ["--batch", "--pinentry-mode", "loopback", "--passphrase", "", "--armor", "--export-secret-keys"], { env, timeout: 60_000 }).toString();
  run("gpgconf", ["--kill", "all"], { env });
  return { kind: "gpg ed25519 secret key block", text };
}

function puttyKeys(dir: string): PrivateKeySample[] {
  const make = (kind: string, args: string[]) => {
    const file = path.join(dir, `${kind.replace(/\W+/g, "-")}.ppk`);
    run("puttygen", [...args, "-o", file, "--new-passphrase", "/dev/null"]);
    return { kind: `puttygen ${kind}`, text: readFileSync(file, "utf8") };
  };
  return [make("ed25519", ["-t", "ed25519"]), make("rsa v2 file", ["-t", "rsa", "-b", "2048", "--ppk-param", "version=2"])];
}

/** Every sample, generated once per test file (a few seconds: RSA and DSA keys, gpg). */
export function privateKeySamples(): PrivateKeySample[] {
  const dir = mkdtempSync(path.join(tmpdir(), "private-keys-"));
  try {
    return [...nodeCryptoKeys(), ...sshKeygenKeys(dir), gpgKey(dir), ...puttyKeys(dir)];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
