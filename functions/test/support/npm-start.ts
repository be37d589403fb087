import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import path from "node:path";

/** `npm start` as a person runs it, from the repository, in the environment of a fresh shell. */

export const REPOSITORY = path.join(__dirname, "..", "..", "..");
const HOST = "127.0.0.1";

export interface Started {
  npm: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** The environment of a fresh shell: none of the test run's emulator variables. */
export function cleanEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of ["FIRESTORE_EMULATOR_HOST", "FIREBASE_AUTH_EMULATOR_HOST", "STORAGE_EMULATOR_HOST", "FIREBASE_STORAGE_EMULATOR_HOST", "GCLOUD_PROJECT", "MODULE_SIGNING_KEYS", "TUF_ONLINE_KEY", "NODE_OPTIONS"]) {
    delete env[name];
  }
  return env;
}

export function npmStart(args: string[], env: NodeJS.ProcessEnv = {}): Started {
  const npm = spawn("npm", ["start", "--", ...args], { cwd: REPOSITORY, env: { ...cleanEnv(), ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  npm.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  npm.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => npm.once("exit", (code) => resolve(code)));
  return { npm, output: () => output, exited };
}

/** Waits for `npm start`'s Ready banner; fails with its output if it exits first. */
export function untilReady(started: Started, timeoutMs = 60_000): Promise<boolean> {
  return until(
    "the Ready banner",
    () => {
      if (started.npm.exitCode !== null) throw new Error(`npm start exited:\n${started.output()}`);
      return started.output().includes("Ready in");
    },
    timeoutMs,
  );
}

export async function until<T>(what: string, check: () => Promise<T | null | undefined> | T | null | undefined, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await check();
    if (value) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`Timed out waiting for ${what}.`);
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen(port, HOST, () => probe.close(() => resolve(true)));
  });
}

export const allFree = async (ports: number[]) => (await Promise.all(ports.map(isFree))).every(Boolean);


/**
 * Every document of a Firestore emulator's database, by path, with its fields as the REST API
 * gives them (every value type spelled out): the root collections, each document, and each
 * document's subcollections, also under documents that exist only as parents.
 */
export async function dumpFirestore(host: string, projectId: string): Promise<Map<string, unknown>> {
  const root = `http://${host}/v1/projects/${projectId}/databases/(default)/documents`;
  const headers = { "content-type": "application/json", authorization: "Bearer owner" };
  const documents = new Map<string, unknown>();
  const collectionIds = async (parent: string): Promise<string[]> => {
    const ids: string[] = [];
    let pageToken: string | undefined;
    do {
      const answer = (await (await fetch(`${parent}:listCollectionIds`, { method: "POST", headers, body: JSON.stringify({ pageSize: 300, pageToken }) })).json()) as { collectionIds?: string[]; nextPageToken?: string };
      ids.push(...(answer.collectionIds ?? []));
      pageToken = answer.nextPageToken;
    } while (pageToken);
    return ids;
  };
  const walk = async (parent: string): Promise<void> => {
    for (const collection of await collectionIds(parent)) {
      let pageToken: string | undefined;
      do {
        const url = `${parent}/${collection}?pageSize=300&showMissing=true${pageToken ? `&pageToken=${encodeURIComponent(pageToken)}` : ""}`;
        const answer = (await (await fetch(url, { headers })).json()) as { documents?: { name: string; fields?: unknown; createTime?: string }[]; nextPageToken?: string };
        for (const document of answer.documents ?? []) {
          const relative = document.name.slice(document.name.indexOf("/documents/") + "/documents/".length);
          if (document.createTime) documents.set(relative, document.fields ?? {});
          await walk(`${root}/${relative}`);
        }
        pageToken = answer.nextPageToken;
      } while (pageToken);
    }
  };
  await walk(root);
  return documents;
}

/** The collections a dump's documents are in, by path without document ids (`businesses/members`), sorted. */
export function collectionsOf(documents: Map<string, unknown>): string[] {
  return [...new Set([...documents.keys()].map((name) => name.split("/").filter((_, index) => index % 2 === 0).join("/")))].sort();
}

/** The Storage emulator's objects of a bucket: name → md5. */
export async function listStorage(origin: string, bucket: string): Promise<Map<string, string>> {
  const objects = new Map<string, string>();
  let pageToken: string | undefined;
  do {
    const answer = (await (await fetch(`${origin}/storage/v1/b/${bucket}/o?maxResults=1000${pageToken ? `&pageToken=${encodeURIComponent(pageToken)}` : ""}`)).json()) as { items?: { name: string; md5Hash: string }[]; nextPageToken?: string };
    for (const item of answer.items ?? []) objects.set(item.name, item.md5Hash);
    pageToken = answer.nextPageToken;
  } while (pageToken);
  return objects;
}
