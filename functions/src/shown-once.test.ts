import { z } from "zod";
import { apiRoutes } from "./app";
import { loadConfig } from "./config";
import { takesIdempotencyKey } from "./core/routes";
import type { Deps } from "./deps";

/**
 * §1: a secret that an answer shows only once (a token, a webhook secret, an invitation's link)
 * is never kept for an Idempotency-Key's replay. Every route whose answer holds one must say so
 * (`shownOnce`), or the idempotency store keeps it in clear and replays it.
 */

const SECRET_FIELD = /(token|secret|password|privateKey|acceptUrl)$/i;

const routes = apiRoutes({ config: loadConfig({ GCLOUD_PROJECT: "shown-once" }) } as Deps);

/** The top-level fields of a route's 2xx answers that name a secret. */
function secretFieldsOf(route: (typeof routes)[number]): string[] {
  return Object.entries(route.responses)
    .filter(([status]) => Number(status) < 300)
    .flatMap(([, response]) => {
      const schema = response.schema as z.ZodType | undefined;
      return schema instanceof z.ZodObject ? Object.keys(schema.shape) : [];
    })
    .filter((field) => SECRET_FIELD.test(field));
}

describe("secrets an answer shows once", () => {
  it("are marked shownOnce on every route that keeps answers for replays", () => {
    const unmarked = routes
      .filter((route) => takesIdempotencyKey(route))
      .flatMap((route) => secretFieldsOf(route).filter((field) => !(route.shownOnce ?? []).includes(field)).map((field) => `${route.operationId}: ${field}`));
    expect(unmarked).toEqual([]);
  });

  it("are found by the check: the routes known to show one are among those it finds", () => {
    const found = new Set(routes.filter((route) => secretFieldsOf(route).length > 0).map((route) => route.operationId));
    for (const operationId of ["createScimToken", "createBusinessWebhook", "rotateSecretOfBusinessWebhook", "inviteMember", "createAccessToken"]) expect([operationId, found.has(operationId)]).toEqual([operationId, true]);
  });
});
