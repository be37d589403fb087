import { z } from "zod";
import { documentId, isoDateTime, oneLine } from "../core/schemas";
import { pageQuery } from "../core/pagination";
import { DELIVERY_STATUSES } from "./delivery-store";

// Its length is the URL rule's (invalid_webhook_url, with the reason), not the schema's; the body's 100 KiB bounds it here.
const url = z.string().trim().min(1).meta({ description: "https:, a public host, no user or password, at most 2,000 characters." });
const events = z
  .array(z.string().min(1).max(100))
  .min(1)
  .max(50)
  .refine((types) => new Set(types).size === types.length, "event types must be distinct")
  .meta({ description: 'Event types of GET /webhooks/event-types for this kind of owner, or ["*"] for all of them.' });
const description = oneLine(z.string().trim().max(500));

export const webhookParamsSchema = z.strictObject({ webhookId: documentId });
export const businessWebhookParamsSchema = z.strictObject({ businessId: documentId });
export const businessWebhookItemParamsSchema = z.strictObject({ businessId: documentId, webhookId: documentId });
export const deliveryParamsSchema = z.strictObject({ webhookId: documentId, messageId: documentId });
export const businessDeliveryParamsSchema = z.strictObject({ businessId: documentId, webhookId: documentId, messageId: documentId });

export const newWebhookSchema = z.strictObject({ url, events, description: description.optional() });
export const webhookPatchSchema = z
  .strictObject({ url: url.optional(), events: events.optional(), description: description.nullable().optional(), disabled: z.boolean().optional() })
  .refine((patch) => Object.values(patch).some((value) => value !== undefined), "Give at least one of url, events, description, disabled.");

export const webhookSchema = z
  .object({
    id: z.string(),
    url: z.string(),
    events: z.array(z.string()),
    description: z.string().nullable(),
    disabled: z.boolean(),
    disabledReason: z.string().nullable().meta({ description: "Why it was disabled: by its owner, a 410, or 5 days of failures." }),
    createdAt: isoDateTime,
    updatedAt: isoDateTime,
  })
  .meta({ id: "Webhook" });
export const createdWebhookSchema = webhookSchema
  .extend({ secret: z.string().meta({ description: "whsec_ and the base64 of 32 random bytes: shown only here and on rotation." }) })
  .meta({ id: "CreatedWebhook" });
export const webhookListSchema = z.object({ items: z.array(webhookSchema) }).meta({ id: "WebhookList" });
export const webhookSecretSchema = z.object({ secret: z.string() }).meta({ id: "WebhookSecret" });

export const deliveryListQuerySchema = z.strictObject({ ...pageQuery, status: z.enum(DELIVERY_STATUSES).optional() });
export const webhookDeliverySchema = z
  .object({
    id: z.string().meta({ description: "The message id: the webhook-id of every attempt." }),
    type: z.string(),
    createdAt: isoDateTime,
    status: z.enum(DELIVERY_STATUSES),
    attempts: z.array(
      z.object({ at: isoDateTime, statusCode: z.number().int().nullable(), error: z.string().optional(), durationMs: z.number().int() }),
    ),
    nextAttemptAt: isoDateTime.nullable(),
  })
  .meta({ id: "WebhookDelivery" });
export const deliveryListSchema = z.object({ items: z.array(webhookDeliverySchema), nextCursor: z.string().nullable() }).meta({ id: "WebhookDeliveryList" });
export const recoverSchema = z.strictObject({ since: isoDateTime.meta({ description: "Failed messages created since then are sent again." }) });

export const eventTypeListSchema = z
  .object({
    items: z.array(
      z.object({
        type: z.string(),
        owner: z.enum(["business", "publisher", "operator", "any"]),
        description: z.string(),
        schema: z.record(z.string(), z.unknown()).meta({ description: "The JSON Schema of the message's data." }),
      }),
    ),
  })
  .meta({ id: "WebhookEventTypes" });
