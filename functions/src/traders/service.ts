import type { z } from "zod";
import type { Actor } from "../core/audit-log";
import { auditLog } from "../core/audit-log";
import type { DeveloperAccount } from "../core/auth";
import { catalogChanges, moduleChange } from "../core/catalog-changes";
import { ApiError } from "../core/errors";
import { toIso } from "../core/documents";
import type { Deps, OperatorDeps } from "../deps";
import { moduleStore } from "../marketplace/module-store";
import type { moduleTraderSchema, traderDeclarationInputSchema, traderDeclarationSchema } from "./schemas";
import { traderStore, type TraderRecord } from "./trader-store";

type TraderDeclaration = z.output<typeof traderDeclarationSchema>;

const notFound = () => new ApiError("trader_declaration_not_found", "This publisher has not declared whether it sells as a trader: PUT /developers/trader.");

const view = (record: TraderRecord): TraderDeclaration =>
  record.trader
    ? {
        trader: true,
        publisherId: record.publisherId,
        name: record.name,
        address: record.address,
        email: record.email,
        phone: record.phone,
        tradeRegister: record.tradeRegister,
        registrationNumber: record.registrationNumber,
        selfCertification: true,
        updatedAt: toIso(record.updatedAt),
      }
    : { trader: false, publisherId: record.publisherId, updatedAt: toIso(record.updatedAt) };

/**
 * PUT /developers/trader: the publisher's declaration, replaced whole. Its modules' pages show the
 * new trader within §13's 2 s (a change on the catalog's feed for each). A publisher with a priced
 * module must stay a trader: a buyer must always see who sells (Art. 31).
 */
export async function declareTrader({ db, clock }: Deps, developer: DeveloperAccount, actor: Actor, input: z.output<typeof traderDeclarationInputSchema>): Promise<TraderDeclaration> {
  const { publisherId } = developer;
  const modules = await moduleStore(db).byPublisher(publisherId);
  const priced = modules.filter((module) => module.price);
  if (!input.trader && priced.length > 0) {
    throw new ApiError("trader_declaration_required", `${priced.map((module) => module.id).join(", ")} ${priced.length === 1 ? "has" : "have"} a price: only a trader sells; remove the prices first.`);
  }
  const now = clock();
  const record: TraderRecord = input.trader
    ? { publisherId, trader: true, name: input.name, address: input.address, email: input.email, phone: input.phone, tradeRegister: input.tradeRegister ?? null, registrationNumber: input.registrationNumber ?? null, declaredBy: developer.id, updatedAt: now }
    : { publisherId, trader: false, declaredBy: developer.id, updatedAt: now };
  const topics = [...new Set(modules.flatMap((module) => moduleChange(module.id)))];
  const answer = view(record);
  await auditLog(db).commit(actor, { action: "trader.declare", target: publisherId, details: { trader: input.trader }, answer }, now, (batch) => {
    traderStore(db).put(batch, record);
    if (topics.length > 0) catalogChanges(db).record(batch, topics);
  });
  if (topics.length > 0) catalogChanges(db).applied(topics);
  return answer;
}

/** GET /developers/trader. */
export async function getTraderDeclaration({ db }: Deps, developer: DeveloperAccount): Promise<TraderDeclaration> {
  const record = await traderStore(db).get(developer.publisherId);
  if (!record) throw notFound();
  return view(record);
}

/** Operators: `trader show <publisherId>`: a publisher's declaration, with who made it. */
export async function showTrader({ db }: Pick<OperatorDeps, "db">, publisherId: string) {
  const record = await traderStore(db).get(publisherId);
  if (!record) throw notFound();
  return { ...view(record), declaredBy: record.declaredBy };
}

/** Before a price is set (§20): a publisher sells only once declared a trader. */
export async function assertMaySell({ db }: Pick<Deps, "db">, publisherId: string): Promise<void> {
  const record = await traderStore(db).get(publisherId);
  if (!record) throw new ApiError("trader_declaration_required", "Declare who sells first (PUT /developers/trader): buyers in the EU see the trader before they pay.");
  if (!record.trader) throw new ApiError("not_a_trader", "This publisher declared that it does not sell as a trader; declare it as a trader to set a price.");
}

/** What a paid module's page shows of who sells it (Art. 31), or null when nobody declared it. */
export async function moduleTrader({ db }: Pick<Deps, "db">, publisherId: string): Promise<z.output<typeof moduleTraderSchema> | null> {
  const record = await traderStore(db).get(publisherId);
  return record?.trader ? { name: record.name, address: record.address, email: record.email, phone: record.phone } : null;
}
