import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { auditLog, systemActor } from "../functions/src/core/audit-log";
import { outboundEvent } from "../functions/src/core/event-types";
import type { Deps } from "../functions/src/deps";
import { runDeployedFunctions } from "../functions/src/local-functions";
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
  const deps: Deps = { ...base, config: { ...base.config, webhooks: { ...base.config.webhooks, allowedHosts: ["127.0.0.1"] } } };
  process.env.WEBHOOK_ALLOWED_HOSTS = "127.0.0.1";
  const functions = await runDeployedFunctions(deps.db, { triggers: ["webhookEvents"], schedules: { webhookSweep: 60_000 }, warn: deps.logger.warn });
  try {
    const businessId = "bench-webhooks";
    const owner = { kind: "business" as const, id: businessId };
    await createWebhook(deps, owner, systemActor("bench"), null, { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, events: ["business.invitation.created"], description: "bench" });
    const committed = new Map<string, number>();
    const change = async (index: number) => {
      const id = `bench-${index}`;
      const event = outboundEvent("business.invitation.created", [owner], { businessId, id, email: `${id}@example.test`, role: "member", seat: false, path: `/businesses/${businessId}/invitations` });
      await auditLog(deps.db).commit(systemActor("bench"), { action: "bench.webhook", target: id, details: {}, emits: [event] }, deps.clock(), () => undefined);
      committed.set(id, performance.now());
    };
    for (let start = 0; start < EVENTS; start += CONCURRENT) {
      await Promise.all(Array.from({ length: Math.min(CONCURRENT, EVENTS - start) }, (_, offset) => change(start + offset)));
    }
    const deadline = Date.now() + 60_000;
    while (arrived.size < EVENTS && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    await Promise.all(bodies);
    const delays = [...committed].map(([id, at]) => (arrived.get(id) ?? Number.POSITIVE_INFINITY) - at).sort((a, b) => a - b);
    const percentile = (p: number) => delays[Math.min(delays.length - 1, Math.ceil((p / 100) * delays.length) - 1)];
    const p95 = percentile(95);
    report({
      name: `webhooks: commit to first attempt, p95 of ${EVENTS}`,
      ratio: p95 / 5000,
      wanted: "≤ 1",
      ok: arrived.size === EVENTS && p95 <= 5000,
      detail: `p50 ${percentile(50).toFixed(0)} ms, p95 ${p95.toFixed(0)} ms (want ≤ 5000), max ${delays.at(-1)!.toFixed(0)} ms; ${arrived.size} of ${EVENTS} received, ${CONCURRENT} changes at once`,
    });
  } finally {
    await functions.stop();
    await new Promise((resolve) => receiver.close(resolve));
  }
}
