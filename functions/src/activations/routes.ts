import { defineRoute } from "../core/routes";
import type { Deps } from "../deps";
import { activationSchema, confirmBodySchema, deviceParamsSchema } from "./schemas";
import { confirmActivation, releaseActivationDevice } from "./service";

/** A user's activations of modules, per device (contract §4, §10). */
export const activationRoutes = (deps: Deps) => [
  defineRoute({
    method: "post",
    path: "/modules/confirm",
    signedAnswers: true,
    operationId: "confirmActivation",
    summary: "Records the caller's activation of a module (idempotent); with a deviceId, on that device, with an offline certificate.",
    tag: "Marketplace",
    auth: "user",
    body: confirmBodySchema,
    responses: { 200: { description: "The activation.", schema: activationSchema } },
    problems: ["not_entitled", "module_not_found", "version_not_found", "no_compatible_version", "module_revoked", "blocked_by_policy", "fallback_only", "device_limit_reached"],
    handle: async ({ body, caller }) => ({ status: 200, body: await confirmActivation(deps, caller, body) }),
  }),
  defineRoute({
    method: "delete",
    path: "/modules/activations/:moduleId/devices/:deviceId",
    operationId: "releaseActivationDevice",
    summary: "Frees a device's slot of a module activation, so another device can take it.",
    tag: "Marketplace",
    auth: "user",
    params: deviceParamsSchema,
    responses: { 204: { description: "The device no longer holds the module." } },
    problems: ["device_not_found"],
    handle: async ({ params, caller }) => {
      await releaseActivationDevice(deps, caller, params.moduleId, params.deviceId);
      return { status: 204 };
    },
  }),
];
