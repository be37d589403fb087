import { defineRoute } from "../core/routes";
import type { Deps } from "../deps";
import { traderDeclarationInputSchema, traderDeclarationSchema } from "./schemas";
import { declareTrader, getTraderDeclaration } from "./service";

/** Traders (contract §30, the DSA's Articles 30–31): who sells, declared by the publisher. */
export const traderRoutes = (deps: Deps) => [
  defineRoute({
    method: "put",
    path: "/developers/trader",
    operationId: "declareTrader",
    summary: "Declares whether the publisher sells as a trader, and if so who it is (shown on its paid modules' pages).",
    tag: "Payments",
    auth: "developer",
    body: traderDeclarationInputSchema,
    responses: { 200: { description: "The declaration.", schema: traderDeclarationSchema } },
    problems: ["trader_declaration_required"],
    handle: async ({ caller, actor, body }) => ({ status: 200, body: await declareTrader(deps, caller.developer, actor, body) }),
  }),
  defineRoute({
    method: "get",
    path: "/developers/trader",
    operationId: "getTraderDeclaration",
    summary: "The publisher's trader declaration.",
    tag: "Payments",
    auth: "developer",
    responses: { 200: { description: "The declaration.", schema: traderDeclarationSchema } },
    problems: ["trader_declaration_not_found"],
    handle: async ({ caller }) => ({ status: 200, body: await getTraderDeclaration(deps, caller.developer) }),
  }),
];
