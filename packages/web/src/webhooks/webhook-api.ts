import { dataOf, publicApi, type Schemas, type SignedInApi } from "../api";

export type Webhook = Schemas["Webhook"];
export type Delivery = Schemas["WebhookDelivery"];
export type EventType = Schemas["WebhookEventTypes"]["items"][number];
type Patch = { url?: string; events?: string[]; description?: string | null; disabled?: boolean };
type Status = "pending" | "succeeded" | "failed";

/** One owner's webhook endpoints (§21): the same operations under a business's or the publisher's paths. */
export interface WebhookApi {
  owner: "business" | "publisher";
  list(): Promise<Webhook[]>;
  create(body: { url: string; events: string[]; description?: string }): Promise<Schemas["CreatedWebhook"]>;
  update(id: string, patch: Patch): Promise<Webhook>;
  remove(id: string): Promise<void>;
  rotate(id: string): Promise<string>;
  test(id: string): Promise<void>;
  deliveries(id: string, status?: Status): Promise<Delivery[]>;
  redeliver(id: string, messageId: string): Promise<void>;
}

export const eventTypes = async (): Promise<EventType[]> => (await dataOf(publicApi.GET("/webhooks/event-types"))).items;

export function businessWebhooks(api: SignedInApi, businessId: string): WebhookApi {
  const item = (webhookId: string) => ({ params: { path: { businessId, webhookId } } });
  return {
    owner: "business",
    list: async () => (await dataOf(api.GET("/businesses/{businessId}/webhooks", { params: { path: { businessId } } }))).items,
    create: (body) => dataOf(api.POST("/businesses/{businessId}/webhooks", { params: { path: { businessId } }, body })),
    update: (id, patch) => dataOf(api.PATCH("/businesses/{businessId}/webhooks/{webhookId}", { ...item(id), body: patch })),
    remove: async (id) => void (await dataOf(api.DELETE("/businesses/{businessId}/webhooks/{webhookId}", item(id)))),
    rotate: async (id) => (await dataOf(api.POST("/businesses/{businessId}/webhooks/{webhookId}/rotate-secret", item(id)))).secret,
    test: async (id) => void (await dataOf(api.POST("/businesses/{businessId}/webhooks/{webhookId}/test", item(id)))),
    deliveries: async (id, status) =>
      (await dataOf(api.GET("/businesses/{businessId}/webhooks/{webhookId}/deliveries", { params: { path: { businessId, webhookId: id }, query: { limit: 20, ...(status ? { status } : {}) } } }))).items,
    redeliver: async (id, messageId) =>
      void (await dataOf(api.POST("/businesses/{businessId}/webhooks/{webhookId}/deliveries/{messageId}/redeliver", { params: { path: { businessId, webhookId: id, messageId } } }))),
  };
}

export function publisherWebhooks(api: SignedInApi): WebhookApi {
  const item = (webhookId: string) => ({ params: { path: { webhookId } } });
  return {
    owner: "publisher",
    list: async () => (await dataOf(api.GET("/developers/webhooks"))).items,
    create: (body) => dataOf(api.POST("/developers/webhooks", { body })),
    update: (id, patch) => dataOf(api.PATCH("/developers/webhooks/{webhookId}", { ...item(id), body: patch })),
    remove: async (id) => void (await dataOf(api.DELETE("/developers/webhooks/{webhookId}", item(id)))),
    rotate: async (id) => (await dataOf(api.POST("/developers/webhooks/{webhookId}/rotate-secret", item(id)))).secret,
    test: async (id) => void (await dataOf(api.POST("/developers/webhooks/{webhookId}/test", item(id)))),
    deliveries: async (id, status) => (await dataOf(api.GET("/developers/webhooks/{webhookId}/deliveries", { params: { path: { webhookId: id }, query: { limit: 20, ...(status ? { status } : {}) } } }))).items,
    redeliver: async (id, messageId) => void (await dataOf(api.POST("/developers/webhooks/{webhookId}/deliveries/{messageId}/redeliver", { params: { path: { webhookId: id, messageId } } }))),
  };
}
