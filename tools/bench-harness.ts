/**
 * What the rows of `npm run bench` share: the run's options, the report, loads (autocannon),
 * comparisons taken in turns, and the server processes (bench-server.cjs) they measure.
 */
import autocannon from "autocannon";
import { fork, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

export const PROJECT_ID = "demo-marketplace-bench";
export const FUNCTIONS_DIR = path.join(__dirname, "..", "functions");
export const quick = process.argv.includes("--quick");
export const profileDir = process.argv.includes("--profile") ? mkdtempSync(path.join(tmpdir(), "bench-profile-")) : null;
/** Rounds of each comparison of request rates, and the seconds of load on each side of a round. */
export const ROUNDS = quick ? 2 : 6;
export const SLICE_S = quick ? 1 : 2;

export interface Row {
  name: string;
  ratio: number;
  wanted: string;
  ok: boolean | null;
  detail: string;
}
export const rows: Row[] = [];
export const report = (row: Row) => {
  rows.push(row);
  const mark = row.ok === null ? "    " : row.ok ? "ok  " : "MISS";
  console.log(`${mark} ${row.name.padEnd(48)} ${row.ratio.toFixed(2).padStart(6)}  (${row.wanted.padEnd(7)}) ${row.detail}`);
};

/** Load from 20 connections for some seconds or requests, as clients send them; with `callers`, each request carries the next caller's token in turn. */
export async function load(url: string, options: { callers?: string[]; seconds?: number; amount?: number }) {
  let turn = 0;
  const callers = options.callers;
  const result = await autocannon({
    url,
    connections: 20,
    // As browsers and Node's fetch send it: the API compresses shared answers of 1 KiB or more.
    headers: { "accept-encoding": "gzip, deflate, br" },
    ...(callers ? { requests: [{ setupRequest: (req: autocannon.Request) => ({ ...req, headers: { ...req.headers, authorization: `Bearer ${callers[turn++ % callers.length]}` } }) }] } : {}),
    ...(options.amount ? { amount: options.amount } : { duration: options.seconds }),
  });
  return { rps: result.requests.average, total: result.requests.total, ok: result["2xx"] + result["3xx"], bad: result.non2xx - result["3xx"] + result.errors + result.timeouts };
}

/** One side of a comparison: a server and the URL loaded on it. */
export interface Side {
  server: BenchServer;
  url: string;
}

/** A load's result with what each request cost its server: CPU, Firestore calls and round trips. */
export async function measured(side: Side, options: { callers?: string[]; amount?: number }) {
  const before = await countsOf(side.server);
  const result = await load(side.url, { ...options, seconds: SLICE_S });
  const after = await countsOf(side.server);
  const per = (key: string) => ((after[key] ?? 0) - (before[key] ?? 0)) / Math.max(result.total, 1);
  return { ...result, calls: per("Firestore"), roundTrips: per("Firestore round trips"), cpuMicros: per("CPU µs") };
}

export type Measured = Awaited<ReturnType<typeof measured>>;

/** Ratios of rounds or pairs taken in turns: their median (the row's figure) and how far they spread. */
export interface Ratios {
  ratio: number;
  /** "lowest–highest over N rounds" */
  spread: string;
}

export function ratiosOf(ratios: number[], what: string): Ratios {
  return { ratio: median(ratios), spread: `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)} over ${ratios.length} ${what}` };
}

/** A comparison of request rates: the rounds' ratios of requests/s. */
export interface Comparison extends Ratios {
  /** Medians over the rounds (requests/s, CPU, calls, round trips); failures and answers summed. */
  target: Measured;
  baseline: Measured;
}

/**
 * A target's requests/s against a baseline's, in rounds of one slice each (SLICE_S seconds, or
 * `amount` requests), taking turns (the baseline first in even rounds, the target first in odd
 * ones). This machine's speed drifts (a bare handler measured 7,650 and 14,460 requests/s a minute
 * apart), so each round's ratio is taken between neighbours in time, and the row is the median of
 * the rounds' ratios.
 */
export async function compare(baseline: Side, target: Side, options: { callers?: string[]; amount?: number } = {}): Promise<Comparison> {
  const rounds: { baseline: Measured; target: Measured }[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    rounds.push(await takingTurns(round, () => measured(baseline, options), () => measured(target, options)));
  }
  const summary = (runs: Measured[]): Measured => ({
    rps: median(runs.map((run) => run.rps)),
    cpuMicros: median(runs.map((run) => run.cpuMicros)),
    calls: median(runs.map((run) => run.calls)),
    roundTrips: median(runs.map((run) => run.roundTrips)),
    total: runs.reduce((sum, run) => sum + run.total, 0),
    ok: runs.reduce((sum, run) => sum + run.ok, 0),
    bad: runs.reduce((sum, run) => sum + run.bad, 0),
  });
  return {
    ...ratiosOf(rounds.map((round) => round.target.rps / round.baseline.rps), "rounds"),
    target: summary(rounds.map((round) => round.target)),
    baseline: summary(rounds.map((round) => round.baseline)),
  };
}

/** One round of a baseline and a target: the baseline first in even rounds, the target first in odd ones. */
export async function takingTurns<T>(round: number, baseline: () => Promise<T> | T, target: () => Promise<T> | T): Promise<{ baseline: T; target: T }> {
  if (round % 2 === 0) {
    const first = await baseline();
    return { baseline: first, target: await target() };
  }
  const first = await target();
  return { target: first, baseline: await baseline() };
}

/** A server process of the bench and where it listens (a port of the system's choosing, so never taken). */
export interface BenchServer {
  kind: "--api" | "--api-uncounted" | "--bare" | "--ceiling";
  child: ChildProcess;
  origin: string;
}

/** An API or baseline server in a process of its own (bench-server.cjs), once it listens. */
export function startServer(kind: BenchServer["kind"], env: Record<string, string>): Promise<BenchServer> {
  const child = fork(path.join(__dirname, "bench-server.cjs"), [kind], {
    env: { ...process.env, ...env },
    execArgv: kind !== "--bare" && profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [],
  });
  return new Promise((resolve, reject) => {
    child.once("message", (message) => resolve({ kind, child, origin: `http://127.0.0.1:${(message as { port: number }).port}` }));
    child.once("exit", (code) => reject(new Error(`bench server ${kind} exited (${code})`)));
  });
}

/** Lets a server go and waits for it to exit: one exiting on its own writes its CPU profile (`--profile`). */
export function letGo({ child }: BenchServer): Promise<unknown> {
  return new Promise((resolve) => (child.once("exit", resolve), child.disconnect()));
}

/** Sends a server a message and resolves with the `key` of its answer (other messages pass by). */
function ask<T>({ child }: BenchServer, message: string, key: string): Promise<T> {
  return new Promise((resolve) => {
    const answered = (answer: unknown) => {
      if (!answer || typeof answer !== "object" || !(key in answer)) return;
      child.off("message", answered);
      resolve((answer as Record<string, T>)[key]);
    };
    child.on("message", answered);
    child.send(message);
  });
}

export const countsOf = (server: BenchServer): Promise<Record<string, number>> => ask(server, "counts", "counts");

interface WriteLimits {
  busiest: [string, number][];
  largest: { writes: number; sample: string[] };
}

/** Starts a row's count of writes per document in these API processes (bench-limits.cjs); returns when it started. */
export async function startLimits(servers: BenchServer[]): Promise<number> {
  await Promise.all(servers.map((server) => ask(server, "limits-reset", "limitsReset")));
  return performance.now();
}

/**
 * Firestore's production limits for a row (§25): the document its API processes wrote most, in
 * writes per second on average over the row (wanted ≤ 1), and the largest commit (wanted ≤ 500
 * writes). The emulator enforces neither.
 */
export async function reportLimits(row: string, servers: BenchServer[], since: number): Promise<void> {
  const seconds = (performance.now() - since) / 1000;
  const measured = await Promise.all(servers.map((server) => ask<WriteLimits>(server, "limits", "limits")));
  const writes = new Map<string, number>();
  for (const { busiest } of measured) for (const [docPath, count] of busiest) writes.set(docPath, (writes.get(docPath) ?? 0) + count);
  const [busiest = ["(none)", 0]] = [...writes].sort((a, b) => b[1] - a[1]);
  const largest = measured.reduce((most, { largest: one }) => (one.writes > most.writes ? one : most), { writes: 0, sample: [] as string[] });
  const perSecond = busiest[1] / seconds;
  report({
    name: `  limits: ${row}`,
    ratio: perSecond,
    wanted: "≤ 1 write/s",
    ok: perSecond <= 1 && largest.writes <= 500,
    detail: `busiest ${busiest[0]} (${busiest[1]} writes in ${seconds.toFixed(1)} s); largest commit ${largest.writes} writes (${largest.sample.join(", ") || "none"})`,
  });
}

/** How long some work took, in ms. */
export async function elapsedMs(work: () => unknown): Promise<number> {
  const started = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - started) / 1e6;
}

/** The nearest-rank `p`th percentile of the values (0 for none). */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0;
}

/** The middle value, or the mean of the two middle ones. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}
