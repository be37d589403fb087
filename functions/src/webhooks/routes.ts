import type { Caller } from "../core/auth";
import type { EventOwner } from "../core/event-outbox";
import { defineRoute } from "../core/routes";
import type { Deps } from "../deps";
import { readBusiness, requireAdmin } from "../businesses/membership";
import { eventTypeItems } from "../core/event-types";
import {
  businessDeliveryParamsSchema,
  businessWebhookItemParamsSchema,
  businessWebhookParamsSchema,
  createdWebhookSchema,
  deliveryListQuerySchema,
  deliveryListSchema,
  deliveryParamsSchema,
  eventTypeListSchema,
  newWebhookSchema,
  recoverSchema,
  webhookListSchema,
  webhookParamsSchema,
  webhookPatchSchema,
  webhookSchema,
  webhookSecretSchema,
} from "./schemas";
import { createWebhook, deleteWebhook, getWebhook, listDeliveries, listWebhooks, recover, redeliver, rotateWebhookSecret, testWebhook, updateWebhook } from "./service";

/**
 * Webhooks (contract §21): the event catalog, and the same set of endpoint operations for a
 * business (its owners and admins, `/businesses/:businessId/webhooks`) and for a publisher (its
 * developer, ID token only, `/developers/webhooks`). The operators' endpoints are the CLI's.
 */
export const webhookRoutes = (deps: Deps) => {
  const businessOwner = async (caller: Caller, businessId: string): Promise<EventOwner> => {
    requireAdmin(await readBusiness(deps, null, businessId, caller.uid), caller, businessId, "manage its webhooks");
    return { kind: "business", id: businessId };
  };
  const scopes = [
    {
      base: "/businesses/:businessId/webhooks",
      name: "Business",
      auth: "user" as const,
      listParams: businessWebhookParamsSchema,
      itemParams: businessWebhookItemParamsSchema,
      deliveryParams: businessDeliveryParamsSchema,
      who: "an owner or admin of the business",
      problems: ["business_not_found", "not_business_admin"] as const,
      owner: (caller: Caller & { developer?: { publisherId: string } }, params: object) => businessOwner(caller, (params as { businessId: string }).businessId),
    },
    {
      base: "/developers/webhooks",
      name: "Publisher",
      auth: "developer" as const,
      listParams: undefined,
      itemParams: webhookParamsSchema,
      deliveryParams: deliveryParamsSchema,
      who: "the publisher's developer (ID token)",
      problems: [] as const,
      owner: async (caller: Caller & { developer?: { publisherId: string } }, _params: object) => ({ kind: "publisher", id: caller.developer!.publisherId }) as EventOwner,
    },
  ];
  return [
    defineRoute({
      method: "get",
      path: "/webhooks/event-types",
      operationId: "listWebhookEventTypes",
      summary: "The event catalog: each type, the kind of owner that may subscribe to it, and the JSON Schema of its data.",
      tag: "Webhooks",
      auth: "none",
      responses: { 200: { description: "The event types.", schema: eventTypeListSchema } },
      cache: "public",
      handle: async () => ({ status: 200, body: { items: eventTypeItems() } }),
    }),
    ...scopes.flatMap((scope) => {
      const tag = "Webhooks";
      const op = (verb: string) => `${verb}${scope.name}Webhook${verb === "list" ? "s" : ""}`;
      const base = { tag, auth: scope.auth };
      return [
        defineRoute({
          ...base,
          method: "post",
          path: scope.base,
          operationId: op("create"),
          summary: `Adds a webhook endpoint (${scope.who}); its secret is in this answer only. At most 20 per owner.`,
          ...(scope.listParams ? { params: scope.listParams } : {}),
          body: newWebhookSchema,
          responses: { 201: { description: "The endpoint, with its secret.", schema: createdWebhookSchema } },
          problems: [...scope.problems, "invalid_webhook_url", "too_many_webhooks"],
          shownOnce: ["secret"],
          handle: async ({ caller, actor, params, body }) => ({ status: 201, body: await createWebhook(deps, await scope.owner(caller, params ?? {}), actor, caller.email ?? null, body) }),
        }),
        defineRoute({
          ...base,
          method: "get",
          path: scope.base,
          operationId: op("list"),
          summary: `The webhook endpoints (${scope.who}), oldest first, never their secrets.`,
          ...(scope.listParams ? { params: scope.listParams } : {}),
          responses: { 200: { description: "The endpoints.", schema: webhookListSchema } },
          problems: [...scope.problems],
          handle: async ({ caller, params }) => ({ status: 200, body: await listWebhooks(deps, await scope.owner(caller, params ?? {})) }),
        }),
        defineRoute({
          ...base,
          method: "get",
          path: `${scope.base}/:webhookId`,
          operationId: op("get"),
          summary: "One webhook endpoint.",
          params: scope.itemParams,
          responses: { 200: { description: "The endpoint.", schema: webhookSchema } },
          problems: [...scope.problems, "webhook_not_found"],
          handle: async ({ caller, params }) => ({ status: 200, body: await getWebhook(deps, await scope.owner(caller, params), params.webhookId) }),
        }),
        defineRoute({
          ...base,
          method: "patch",
          path: `${scope.base}/:webhookId`,
          operationId: op("update"),
          summary: "Changes an endpoint's URL, event types or description, or disables it (disabled false enables it again).",
          params: scope.itemParams,
          body: webhookPatchSchema,
          responses: { 200: { description: "The endpoint.", schema: webhookSchema } },
          problems: [...scope.problems, "webhook_not_found", "invalid_webhook_url"],
          handle: async ({ caller, actor, params, body }) => ({ status: 200, body: await updateWebhook(deps, await scope.owner(caller, params), actor, caller.email ?? null, params.webhookId, body) }),
        }),
        defineRoute({
          ...base,
          method: "delete",
          path: `${scope.base}/:webhookId`,
          operationId: op("delete"),
          summary: "Deletes an endpoint: nothing more is sent to it.",
          params: scope.itemParams,
          responses: { 204: { description: "Deleted." } },
          problems: [...scope.problems, "webhook_not_found"],
          handle: async ({ caller, actor, params }) => {
            await deleteWebhook(deps, await scope.owner(caller, params), actor, params.webhookId);
            return { status: 204 };
          },
        }),
        defineRoute({
          ...base,
          method: "post",
          path: `${scope.base}/:webhookId/rotate-secret`,
          operationId: op("rotateSecretOf"),
          summary: "A new secret, shown once; for 24 hours deliveries are signed by the old and the new.",
          params: scope.itemParams,
          responses: { 200: { description: "The new secret.", schema: webhookSecretSchema } },
          problems: [...scope.problems, "webhook_not_found"],
          shownOnce: ["secret"],
          handle: async ({ caller, actor, params }) => ({ status: 200, body: await rotateWebhookSecret(deps, await scope.owner(caller, params), actor, params.webhookId) }),
        }),
        defineRoute({
          ...base,
          method: "post",
          path: `${scope.base}/:webhookId/test`,
          operationId: op("test"),
          summary: "Sends a webhook.test message to this endpoint.",
          params: scope.itemParams,
          responses: { 202: { description: "Queued." } },
          problems: [...scope.problems, "webhook_not_found"],
          handle: async ({ caller, actor, params }) => {
            await testWebhook(deps, await scope.owner(caller, params), actor, params.webhookId);
            return { status: 202 };
          },
        }),
        defineRoute({
          ...base,
          method: "get",
          path: `${scope.base}/:webhookId/deliveries`,
          operationId: op("listDeliveriesOf"),
          summary: "The endpoint's messages of the last 30 days, newest first, each with its attempts.",
          params: scope.itemParams,
          query: deliveryListQuerySchema,
          responses: { 200: { description: "A page of deliveries.", schema: deliveryListSchema } },
          problems: [...scope.problems, "webhook_not_found"],
          handle: async ({ caller, params, query }) => ({ status: 200, body: await listDeliveries(deps, await scope.owner(caller, params), params.webhookId, query) }),
        }),
        defineRoute({
          ...base,
          method: "post",
          path: `${scope.base}/:webhookId/deliveries/:messageId/redeliver`,
          operationId: op("redeliverTo"),
          summary: "Sends a message again, with the same webhook-id.",
          params: scope.deliveryParams,
          responses: { 202: { description: "Queued." } },
          problems: [...scope.problems, "webhook_not_found", "message_not_found"],
          handle: async ({ caller, actor, params }) => {
            await redeliver(deps, await scope.owner(caller, params), actor, params.webhookId, params.messageId);
            return { status: 202 };
          },
        }),
        defineRoute({
          ...base,
          method: "post",
          path: `${scope.base}/:webhookId/recover`,
          operationId: op("recover"),
          summary: "Sends again every message that failed since a time.",
          params: scope.itemParams,
          body: recoverSchema,
          responses: { 202: { description: "Queued." } },
          problems: [...scope.problems, "webhook_not_found"],
          handle: async ({ caller, actor, params, body }) => {
            await recover(deps, await scope.owner(caller, params), actor, params.webhookId, new Date(body.since));
            return { status: 202 };
          },
        }),
      ];
    }),
  ];
};
