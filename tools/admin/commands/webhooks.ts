/** `webhooks`: the operators' webhook endpoints (§21). */
import { randomBytes } from "node:crypto";
import type { Command } from "commander";
import { webhookSettings } from "../../../functions/src/config";
import { OPERATORS } from "../../../functions/src/core/event-outbox";
import { cursorCodec } from "../../../functions/src/core/pagination";
import type { AdminContext } from "../../../functions/src/local";
import { DELIVERY_STATUSES, type DeliveryStatus } from "../../../functions/src/webhooks/delivery-store";
import { createWebhook, deleteWebhook, listDeliveries, listWebhooks, recover, redeliver, updateWebhook } from "../../../functions/src/webhooks/service";
import { UsageError, oneOf, stderrLogger, type Cli } from "../cli";

export function registerWebhookCommands(program: Command, { action, io }: Cli): void {
  // The operators' webhook endpoints (§21): the same operations as a business's or a publisher's.
  const webhookDeps = (ctx: AdminContext) => ({
    ...ctx,
    config: { webhooks: webhookSettings({ ...io.env, FIRESTORE_EMULATOR_HOST: io.env.FIRESTORE_EMULATOR_HOST ?? process.env.FIRESTORE_EMULATOR_HOST }) },
    logger: stderrLogger(io),
    cursors: cursorCodec(randomBytes(32)),
  });

  const eventList = (raw: string) => raw.split(",").map((type) => type.trim()).filter(Boolean);
  const webhooks = program.command("webhooks").description("the operators' webhook endpoints (§21): releases, quarantined versions, reported reviews");
  webhooks
    .command("add")
    .description("add an endpoint; its secret (whsec_…) is printed once")
    .argument("<url>")
    .requiredOption("--events <type,…>", "event types of GET /webhooks/event-types for operators, or *")
    .option("--description <text>")
    .action(action((ctx, url: string, options: { events: string; description?: string }) => createWebhook(webhookDeps(ctx), OPERATORS, ctx.actor!, null, { url, events: eventList(options.events), ...(options.description ? { description: options.description } : {}) })));
  webhooks
    .command("list")
    .description("the endpoints, without their secrets")
    .action(action(async (ctx) => (await listWebhooks(webhookDeps(ctx), OPERATORS)).items));
  webhooks
    .command("update")
    .description("change an endpoint's URL, events or description, or disable or enable it")
    .argument("<webhookId>")
    .option("--url <url>")
    .option("--events <type,…>")
    .option("--description <text>")
    .option("--disable", "stop sending to it")
    .option("--enable", "send to it again (its failures start afresh)")
    .action(
      action((ctx, webhookId: string, options: { url?: string; events?: string; description?: string; disable?: boolean; enable?: boolean }) => {
        if (options.disable && options.enable) throw new UsageError("Give --disable or --enable, not both.");
        const disabled = options.disable ? true : options.enable ? false : undefined;
        return updateWebhook(webhookDeps(ctx), OPERATORS, ctx.actor!, null, webhookId, {
          ...(options.url ? { url: options.url } : {}),
          ...(options.events ? { events: eventList(options.events) } : {}),
          ...(options.description !== undefined ? { description: options.description } : {}),
          ...(disabled !== undefined ? { disabled } : {}),
        });
      }),
    );
  webhooks
    .command("remove")
    .argument("<webhookId>")
    .action(action(async (ctx, webhookId: string) => (await deleteWebhook(webhookDeps(ctx), OPERATORS, ctx.actor!, webhookId), { webhookId, removed: true })));
  webhooks
    .command("deliveries")
    .description("an endpoint's messages of the last 30 days, newest first, with their attempts")
    .argument("<webhookId>")
    .option("--status <status>", DELIVERY_STATUSES.join(", "))
    .action(
      action(async (ctx, webhookId: string, options: { status?: string }) => {
        if (options.status && !(DELIVERY_STATUSES as readonly string[]).includes(options.status)) throw new UsageError(`--status must be one of ${oneOf(DELIVERY_STATUSES)}.`);
        return (await listDeliveries(webhookDeps(ctx), OPERATORS, webhookId, { limit: 100, ...(options.status ? { status: options.status as DeliveryStatus } : {}) })).items;
      }),
    );
  webhooks
    .command("redeliver")
    .description("send a message again, with the same webhook-id")
    .argument("<webhookId>")
    .argument("<messageId>")
    .action(action(async (ctx, webhookId: string, messageId: string) => (await redeliver(webhookDeps(ctx), OPERATORS, ctx.actor!, webhookId, messageId), { webhookId, messageId, queued: true })));
  webhooks
    .command("recover")
    .description("queue every message that failed since a time to be sent again (by the next webhook sweep)")
    .argument("<webhookId>")
    .requiredOption("--since <time>", "RFC 3339, e.g. 2026-11-20T00:00:00Z")
    .action(
      action((ctx, webhookId: string, options: { since: string }) => {
        const since = new Date(options.since);
        if (Number.isNaN(since.getTime())) throw new UsageError(`--since must be a time such as 2026-11-20T00:00:00Z, got '${options.since}'.`);
        return recover(webhookDeps(ctx), OPERATORS, ctx.actor!, webhookId, since).then(() => ({ webhookId, since: since.toISOString(), queued: true }));
      }),
    );
}
