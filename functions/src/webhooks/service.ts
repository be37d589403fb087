import type { z } from "zod";
import { auditLog, type Actor } from "../core/audit-log";
import { withinDeadline } from "../core/deadline";
import { toIso } from "../core/documents";
import { ownerKey, type EventOwner } from "../core/event-outbox";
import { EVENT_TYPES, outboundEvent, subscribable } from "../core/event-types";
import { ApiError, invalidRequest } from "../core/errors";
import { randomBase62 } from "../core/secret-tokens";
import { DAY_MS } from "../core/time";
import type { Deps } from "../deps";
import { deliveryId, deliveryStore, type DeliveryRecord } from "./delivery-store";
import { endpointStore, MAX_ENDPOINTS_PER_OWNER, type EndpointRecord } from "./endpoint-store";
import type { deliveryListQuerySchema, newWebhookSchema, webhookPatchSchema } from "./schemas";
import { inFlightStore } from "./in-flight-store";
import { encryptSecret, newWebhookSecret } from "./secrets";
import { publicAddresses } from "./sender";
import { recoveryStore } from "./recovery-store";

/**
 * Webhook endpoints of one owner (contract §21): a business's, a publisher's or the operators';
 * the API's routes and the operator CLI call these with the owner they stand for.
 */

export type WebhookDeps = Pick<Deps, "db" | "clock" | "logger"> & { config: Pick<Deps["config"], "webhooks"> };

/** After a rotation the previous secret signs too, for this long. */
const ROTATION_OVERLAP_MS = DAY_MS;

const notFound = (id: string) => new ApiError("webhook_not_found", `No webhook endpoint '${id}'.`);

export const toWebhookView = (endpoint: EndpointRecord) => ({
  id: endpoint.id,
  url: endpoint.url,
  events: endpoint.events,
  description: endpoint.description,
  disabled: endpoint.disabled,
  disabledReason: endpoint.disabledReason,
  createdAt: toIso(endpoint.createdAt),
  updatedAt: toIso(endpoint.updatedAt),
});

export const toDeliveryView = (delivery: DeliveryRecord) => ({
  id: delivery.messageId,
  type: delivery.type,
  createdAt: toIso(delivery.createdAt),
  status: delivery.status,
  attempts: delivery.attempts.map((attempt) => ({ at: toIso(attempt.at), statusCode: attempt.statusCode, ...(attempt.error ? { error: attempt.error } : {}), durationMs: attempt.durationMs })),
  nextAttemptAt: delivery.status === "pending" && delivery.nextAttemptAt ? toIso(delivery.nextAttemptAt) : null,
});

/** The event types an owner asks for: each in the catalog and for its kind of owner, or "*" alone. */
function checkedEvents(owner: EventOwner, events: string[]): string[] {
  if (events.includes("*")) {
    if (events.length > 1) throw invalidRequest('"*" takes every event type: give it alone.', [{ path: "events", message: '"*" must be alone.' }]);
    return events;
  }
  const refused = events.filter((type) => !subscribable(type, owner.kind));
  if (refused.length > 0) {
    const reason = refused.map((type) => ((EVENT_TYPES as string[]).includes(type) ? `${type} is not an event of ${owner.kind === "operator" ? "the operators" : `a ${owner.kind}`}` : `${type} is not an event type`)).join("; ");
    throw invalidRequest(`${reason}: see GET /webhooks/event-types.`, [{ path: "events", message: reason }]);
  }
  return events;
}

/** Runs a change of one owner's endpoints in a transaction, with the endpoint it names (404 when not the owner's). */
async function changeEndpoint<T>(deps: WebhookDeps, owner: EventOwner, webhookId: string, change: (tx: FirebaseFirestore.Transaction, endpoint: EndpointRecord, now: Date) => T): Promise<T> {
  const endpoints = endpointStore(deps.db);
  return withinDeadline(
    "Firestore",
    deps.db.runTransaction(async (tx) => {
      const endpoint = await endpoints.getIn(tx, webhookId);
      if (!endpoint || endpoint.owner !== ownerKey(owner)) throw notFound(webhookId);
      return change(tx, endpoint, deps.clock());
    }),
  );
}

export async function createWebhook(deps: WebhookDeps, owner: EventOwner, actor: Actor, contactEmail: string | null, input: z.output<typeof newWebhookSchema>) {
  const { db, config } = deps;
  const events = checkedEvents(owner, input.events);
  await publicAddresses(input.url, config.webhooks);
  const secret = newWebhookSecret();
  const id = `wh_${randomBase62(20)}`;
  const sealed = encryptSecret(secret, config.webhooks.secretsKey, id);
  const endpoints = endpointStore(db);
  return withinDeadline(
    "Firestore",
    db.runTransaction(async (tx) => {
      const owned = await endpoints.ownedIn(tx, ownerKey(owner));
      if (owned.length >= MAX_ENDPOINTS_PER_OWNER) throw new ApiError("too_many_webhooks", `At most ${MAX_ENDPOINTS_PER_OWNER} webhook endpoints per owner: delete one first.`);
      const now = deps.clock();
      const created: EndpointRecord = {
        id,
        owner: ownerKey(owner),
        url: input.url,
        events,
        description: input.description || null,
        disabled: false,
        disabledReason: null,
        secrets: [{ sealed, createdAt: now, retiresAt: null }],
        createdAt: now,
        updatedAt: now,
        failingSince: null,
        contactEmail,
      };
      endpoints.put(tx, created);
      const answer = { ...toWebhookView(created), secret };
      auditLog(db).record(tx, actor, { action: "webhook.create", target: created.id, details: { owner: created.owner, url: created.url, events }, answer }, now);
      return answer;
    }),
  );
}

export async function listWebhooks(deps: WebhookDeps, owner: EventOwner) {
  return { items: (await endpointStore(deps.db).owned(ownerKey(owner))).map(toWebhookView) };
}

export async function getWebhook(deps: WebhookDeps, owner: EventOwner, webhookId: string) {
  const endpoint = await endpointStore(deps.db).get(webhookId);
  if (!endpoint || endpoint.owner !== ownerKey(owner)) throw notFound(webhookId);
  return toWebhookView(endpoint);
}

export async function updateWebhook(deps: WebhookDeps, owner: EventOwner, actor: Actor, contactEmail: string | null, webhookId: string, patch: z.output<typeof webhookPatchSchema>) {
  const events = patch.events && checkedEvents(owner, patch.events);
  if (patch.url) await publicAddresses(patch.url, deps.config.webhooks);
  return changeEndpoint(deps, owner, webhookId, (tx, endpoint, now) => {
    const changed: EndpointRecord = {
      ...endpoint,
      url: patch.url ?? endpoint.url,
      events: events ?? endpoint.events,
      description: patch.description === undefined ? endpoint.description : patch.description || null,
      disabled: patch.disabled ?? endpoint.disabled,
      // Enabled again: its failures start afresh.
      disabledReason: patch.disabled === undefined ? endpoint.disabledReason : patch.disabled ? "Disabled by its owner." : null,
      failingSince: patch.disabled === false ? null : endpoint.failingSince,
      updatedAt: now,
      contactEmail: contactEmail ?? endpoint.contactEmail,
    };
    endpointStore(deps.db).put(tx, changed);
    auditLog(deps.db).record(tx, actor, { action: "webhook.update", target: webhookId, details: { owner: endpoint.owner, ...patch } }, now);
    return toWebhookView(changed);
  });
}

export async function deleteWebhook(deps: WebhookDeps, owner: EventOwner, actor: Actor, webhookId: string): Promise<void> {
  await changeEndpoint(deps, owner, webhookId, (tx, endpoint, now) => {
    endpointStore(deps.db).delete(tx, webhookId);
    inFlightStore(deps.db).deleteAllIn(tx, webhookId);
    auditLog(deps.db).record(tx, actor, { action: "webhook.delete", target: webhookId, details: { owner: endpoint.owner, url: endpoint.url } }, now);
  });
}

/** A new secret; the previous one keeps signing for 24 h beside it, so receivers can move over. */
export async function rotateWebhookSecret(deps: WebhookDeps, owner: EventOwner, actor: Actor, webhookId: string) {
  const secret = newWebhookSecret();
  const sealed = encryptSecret(secret, deps.config.webhooks.secretsKey, webhookId);
  await changeEndpoint(deps, owner, webhookId, (tx, endpoint, now) => {
    const retiring = endpoint.secrets.filter((old) => old.retiresAt === null || old.retiresAt > now).map((old) => ({ ...old, retiresAt: old.retiresAt ?? new Date(now.getTime() + ROTATION_OVERLAP_MS) }));
    // The current one and the one it replaced: never more than two sign.
    const secrets = [{ sealed, createdAt: now, retiresAt: null }, ...retiring.slice(0, 1)];
    endpointStore(deps.db).put(tx, { ...endpoint, secrets, updatedAt: now });
    auditLog(deps.db).record(tx, actor, { action: "webhook.rotate-secret", target: webhookId, details: { owner: endpoint.owner }, answer: { secret } }, now);
  });
  return { secret };
}

/** Sends a `webhook.test` message to this endpoint alone, through the outbox as every message goes. */
export async function testWebhook(deps: WebhookDeps, owner: EventOwner, actor: Actor, webhookId: string): Promise<void> {
  await changeEndpoint(deps, owner, webhookId, (tx, endpoint, now) => {
    const event = { ...outboundEvent("webhook.test", [owner], { webhookId, message: "A test delivery, sent on request." }), endpointId: webhookId };
    auditLog(deps.db).record(tx, actor, { action: "webhook.test", target: webhookId, details: { owner: endpoint.owner }, emits: [event] }, now);
  });
}

export async function listDeliveries(deps: WebhookDeps & Pick<Deps, "cursors">, owner: EventOwner, webhookId: string, query: z.output<typeof deliveryListQuerySchema>) {
  await getWebhook(deps, owner, webhookId);
  const after = query.cursor ? deps.cursors.decode(query.cursor) : undefined;
  const page = await deliveryStore(deps.db).page(webhookId, query.status, { limit: query.limit, after });
  return { items: page.deliveries.map(toDeliveryView), nextCursor: page.more && page.last ? deps.cursors.encode(page.last) : null };
}

/**
 * Queues a message to the endpoint again, with the same webhook-id, whatever came of it before:
 * due now, sent by the next webhook sweep (an attempt in flight no longer counts: its record is
 * not taken).
 */
export async function redeliver(deps: WebhookDeps, owner: EventOwner, actor: Actor, webhookId: string, messageId: string): Promise<void> {
  const deliveries = deliveryStore(deps.db);
  await changeEndpoint(deps, owner, webhookId, async (tx, endpoint, now) => {
    const delivery = await deliveries.getIn(tx, deliveryId(messageId, webhookId));
    if (!delivery) throw new ApiError("message_not_found", `No message '${messageId}' for this endpoint.`);
    deliveries.update(tx, delivery.id, { status: "pending", nextAttemptAt: now, leaseUntil: null });
    auditLog(deps.db).record(tx, actor, { action: "webhook.redeliver", target: webhookId, details: { owner: endpoint.owner, messageId } }, now);
  });
}

/** Queues every message that failed since `since` to be sent again: the webhook sweep makes them due a page at a time (recovery-store.ts). */
export async function recover(deps: WebhookDeps, owner: EventOwner, actor: Actor, webhookId: string, since: Date): Promise<void> {
  await changeEndpoint(deps, owner, webhookId, (tx, endpoint, now) => {
    recoveryStore(deps.db).addIn(tx, webhookId, since, now);
    auditLog(deps.db).record(tx, actor, { action: "webhook.recover", target: webhookId, details: { owner: endpoint.owner, since: since.toISOString() } }, now);
  });
}
