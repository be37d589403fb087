import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { auditLog, systemActor } from "../functions/src/core/audit-log";
import { outboundEvent } from "../functions/src/core/event-types";
import type { Deps } from "../functions/src/deps";
import { runDeployedFunctions } from "../functions/src/local-functions";
import { percentile } from "./bench-harness";
import { deliveryStore } from "../functions/src/webhooks/delivery-store";
import { createWebhook } from "../functions/src/webhooks/service";

/**
 * §21's "first attempt within 5 s of the commit (p95)": 200 events from concurrent changes, each
 * committed as every service commits one (the audit log's commit with the event in `emits`), timed
 * from the commit's answer to the moment the receiver has the request's headers (its first byte),
 * sent by the deployed functions (`webhookEvents` fired by this process on each event, as the
 * emulator would; `webhookSweep` every minute, as deployed).
 */

export interface WebhookLatencyRow {
  name: string;
  ratio: number;
  wanted: string;
  ok: boolean;
  detail: string;
}

const EVENTS = 200;

/** The bench's deps, its receivers on 127.0.0.1 allowed (as WEBHOOK_BENCH_ENV allows them to the deployed functions). */
const withLocalReceivers = (base: Deps): Deps => ({ ...base, config: { ...base.config, webhooks: { ...base.config.webhooks, allowedHosts: ["127.0.0.1"] } } });

/** The deployed webhook functions, the sweep every `sweepMs`, their failures told on the console. */
const webhookFunctions = (deps: Deps, sweepMs: number) =>
  runDeployedFunctions(deps.db, { triggers: ["webhookEvents"], schedules: { webhookSweep: sweepMs }, warn: (message, details) => console.warn(`  ${message}`, details) });

/** One change with its invitation event for the business's endpoints, committed as every service commits one (the audit log's commit, the event in `emits`). */
async function commitInvitationEvent(deps: Deps, businessId: string, id: string): Promise<void> {
  const event = outboundEvent("business.invitation.created", [{ kind: "business", id: businessId }], { businessId, id, email: `${id}@example.test`, role: "member", seat: false, path: `/businesses/${businessId}/invitations` });
  await auditLog(deps.db).commit(systemActor("bench"), { action: "bench.webhook", target: id, details: {}, emits: [event] }, deps.clock(), () => undefined);
}
const CONCURRENT = 20;

export async function webhookFirstAttempts(base: Deps, report: (row: WebhookLatencyRow) => void) {
  const arrived = new Map<string, number>();
  const bodies: Promise<void>[] = [];
  const receiver = createServer((req, res) => {
    const at = performance.now();
    const chunks: Buffer[] = [];
    bodies.push(
      new Promise((resolve) =>
        req.on("data", (chunk: Buffer) => chunks.push(chunk)).on("end", () => {
          const { data } = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { data: { id: string } };
          if (!arrived.has(data.id)) arrived.set(data.id, at);
          res.writeHead(204).end();
          resolve();
        }),
      ),
    );
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const deps = withLocalReceivers(base);
  const functions = await webhookFunctions(deps, 60_000);
  try {
    const businessId = "bench-webhooks";
    const owner = { kind: "business" as const, id: businessId };
    await createWebhook(deps, owner, systemActor("bench"), null, { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, events: ["business.invitation.created"], description: "bench" });
    const committed = new Map<string, number>();
    const change = async (index: number) => {
      const id = `bench-${index}`;
      await commitInvitationEvent(deps, businessId, id);
      committed.set(id, performance.now());
    };
    for (let start = 0; start < EVENTS; start += CONCURRENT) {
      await Promise.all(Array.from({ length: Math.min(CONCURRENT, EVENTS - start) }, (_, offset) => change(start + offset)));
    }
    const deadline = Date.now() + 60_000;
    while (arrived.size < EVENTS && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    await Promise.all(bodies);
    const delays = [...committed].map(([id, at]) => (arrived.get(id) ?? Number.POSITIVE_INFINITY) - at);
    const p95 = percentile(delays, 95);
    report({
      name: `webhooks: commit to first attempt, p95 of ${EVENTS}`,
      ratio: p95 / 5000,
      wanted: "≤ 1",
      ok: arrived.size === EVENTS && p95 <= 5000,
      detail: `p50 ${percentile(delays, 50).toFixed(0)} ms, p95 ${p95.toFixed(0)} ms (want ≤ 5000), max ${Math.max(...delays).toFixed(0)} ms; ${arrived.size} of ${EVENTS} received, ${CONCURRENT} changes at once`,
    });
  } finally {
    await functions.stop();
    await new Promise((resolve) => receiver.close(resolve));
  }
}

/** How often the fairness row runs the sweep (deployed: every minute). */
const FAIRNESS_SWEEP_MS = 10_000;
/**
 * The deployed functions' configuration in the bench's process (they read it once, on their first
 * event, as an instance does): receivers on 127.0.0.1, and a retry schedule whose first retry is
 * the trigger's (1 s) and second the sweep's (70 s: past the trigger's first 60 s).
 */
export const WEBHOOK_BENCH_ENV = { WEBHOOK_ALLOWED_HOSTS: "127.0.0.1", WEBHOOK_RETRY_SCHEDULE: "1,70" };

/**
 * §21 "As deployed": one endpoint whose receiver holds every request (each attempt times out at
 * 15 s) while 150 changes queue for it, and 20 other endpoints with one message each whose
 * receivers fail the first two attempts: the others' first attempts within 5 s (p95), and their
 * second retry, the sweep's, within a sweep's period of falling due (p95). Sent by the deployed
 * functions, the sweep every 10 s (deployed: every minute, so a retry is up to a minute late there).
 */
export async function webhookFairness(base: Deps, report: (row: WebhookLatencyRow) => void) {
  const started = performance.now();
  const arrivals = new Map<string, number[]>();
  let stalledOpen = 0;
  let stalledMostOpen = 0;
  const held: (() => void)[] = [];
  const receiver = createServer((req, res) => {
    const at = performance.now();
    const path = req.url ?? "";
    req.resume();
    if (path === "/stalled") {
      stalledOpen += 1;
      stalledMostOpen = Math.max(stalledMostOpen, stalledOpen);
      res.on("close", () => (stalledOpen -= 1));
      held.push(() => res.writeHead(204).end());
      return;
    }
    const seen = arrivals.get(path) ?? [];
    arrivals.set(path, [...seen, at]);
    res.writeHead(seen.length < 2 ? 500 : 204).end();
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  const deps = withLocalReceivers(base);
  const functions = await webhookFunctions(deps, FAIRNESS_SWEEP_MS);
  try {
    const commit = (businessId: string, index: number) => commitInvitationEvent(deps, businessId, `fair-${index}`);
    const endpointOf = async (businessId: string, path: string) =>
      (await createWebhook(deps, { kind: "business", id: businessId }, systemActor("bench"), null, { url: `${origin}${path}`, events: ["business.invitation.created"], description: "bench" })).id;
    await endpointOf("bench-stalled", "/stalled");
    const others = await Promise.all(Array.from({ length: 20 }, async (_, index) => ({ path: `/other-${index}`, businessId: `bench-other-${index}`, endpointId: await endpointOf(`bench-other-${index}`, `/other-${index}`) })));
    await Promise.all(Array.from({ length: 150 }, (_, index) => commit("bench-stalled", index)));
    // The others' changes once the stalled endpoint's queue is there.
    const committed = new Map<string, number>();
    await Promise.all(others.map(async (other, index) => committed.set(other.path, (await commit(other.businessId, 1_000 + index), performance.now()))));
    // The second retry's due time, read once the second attempt is recorded.
    const dueAt = new Map<string, number>();
    const deadline = Date.now() + 180_000;
    while (Date.now() < deadline && others.some((other) => (arrivals.get(other.path)?.length ?? 0) < 3)) {
      for (const other of others) {
        if (dueAt.has(other.path) || (arrivals.get(other.path)?.length ?? 0) < 2) continue;
        const [delivery] = (await deliveryStore(deps.db).page(other.endpointId, undefined, { limit: 1 })).deliveries;
        if (delivery?.attempts.length === 2 && delivery.nextAttemptAt) dueAt.set(other.path, performance.now() + (delivery.nextAttemptAt.getTime() - Date.now()));
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const firsts = others.map((other) => (arrivals.get(other.path)?.[0] ?? Number.POSITIVE_INFINITY) - committed.get(other.path)!);
    const lateness = others.map((other) => (arrivals.get(other.path)?.[2] ?? Number.POSITIVE_INFINITY) - (dueAt.get(other.path) ?? Number.NEGATIVE_INFINITY));
    const firstP95 = percentile(firsts, 95);
    const lateP95 = percentile(lateness, 95);
    report({
      name: "webhooks: 20 endpoints beside one stalled, first attempt p95",
      ratio: firstP95 / 5000,
      wanted: "≤ 1",
      ok: firstP95 <= 5000 && stalledMostOpen <= 10,
      detail: `p95 ${firstP95.toFixed(0)} ms (want ≤ 5000), max ${Math.max(...firsts).toFixed(0)} ms; the stalled endpoint: 150 queued, at most ${stalledMostOpen} open at once`,
    });
    report({
      name: "webhooks: the sweep's retry beside one stalled, lateness p95",
      ratio: lateP95 / (FAIRNESS_SWEEP_MS + 5_000),
      wanted: "≤ 1",
      ok: lateP95 <= FAIRNESS_SWEEP_MS + 5_000,
      detail: `p95 ${(lateP95 / 1000).toFixed(1)} s after falling due (want ≤ ${(FAIRNESS_SWEEP_MS + 5_000) / 1000} s: the sweep every ${FAIRNESS_SWEEP_MS / 1000} s, deployed every 60 s), max ${(Math.max(...lateness) / 1000).toFixed(1)} s; ${others.filter((other) => (arrivals.get(other.path)?.length ?? 0) >= 3).length} of 20 retried, ${dueAt.size} due times read; row ${((performance.now() - started) / 1000).toFixed(0)} s`,
    });
  } finally {
    held.forEach((answer) => answer());
    await functions.stop();
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
  }
}
