import { readFile } from "node:fs/promises";
import { createInterface } from "node:readline";
import type { Command } from "commander";
import { printResult } from "../../../tools/admin/output";
import { UsageError } from "./problems";
import { DEFAULT_API, publisherClient, type Env } from "./session";

/**
 * What every command group of `mpkg` shares: where its output goes, the API it talks to, how an
 * answer is printed, the publisher's credentials, and reading what the user gives (files, @file
 * values, standard input, the terminal).
 */

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

/** What a command group's file is given. */
export interface Cli {
  io: Io;
  globals(command: Command): GlobalOptions;
  /** The API's base URL: --api, else MPKG_API, else the local stack's. */
  apiOf(command: Command): string;
  print(command: Command, result: unknown): void;
  /** A client with the publisher's credentials: MPKG_TOKEN (unless `accessToken` is false), else the saved login. */
  asPublisher(command: Command, accessToken?: boolean): ReturnType<typeof publisherClient>;
}

export function commandLine(io: Io): Cli {
  const globals = (command: Command) => command.optsWithGlobals<GlobalOptions>();
  const apiOf = (command: Command) => (globals(command).api ?? io.env.MPKG_API ?? DEFAULT_API).replace(/\/+$/, "");
  return {
    io,
    globals,
    apiOf,
    print: (command, result) => printResult(result, { json: globals(command).json ?? false, out: io.stdout }),
    asPublisher: (command, accessToken = true) => publisherClient(apiOf(command), io.env, { accessToken }),
  };
}

export async function readJson<T>(file: string): Promise<T> {
  const text = await readFile(file, "utf8").catch(() => {
    throw new UsageError(`Cannot read '${file}'.`);
  });
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new UsageError(`'${file}' is not JSON.`);
  }
}

/** A value given inline, or as @file. */
export async function inlineOrFile(value: string): Promise<string> {
  if (!value.startsWith("@")) return value.trim();
  return (
    await readFile(value.slice(1), "utf8").catch(() => {
      throw new UsageError(`Cannot read '${value.slice(1)}'.`);
    })
  ).trim();
}

export function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on("data", (chunk: Buffer | string) => chunks.push(Buffer.from(chunk)));
    stream.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    stream.on("error", reject);
  });
}

/** Asks on the terminal; `secret` answers are not echoed. */
export function ask(io: Io, question: string, secret: boolean): Promise<string> {
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
