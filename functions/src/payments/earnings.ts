import type { DeveloperAccount } from "../core/auth";
import { DAY_MS, storableInstant } from "../core/time";
import type { Deps } from "../deps";
import { statsRange } from "../publishing/stats";
import { ledgerStore } from "./ledger-store";
import { earningsOf } from "./rules";

/**
 * GET /developers/earnings (contract §20): the publisher's sales in a range of days (UTC, `to`
 * inclusive; the last 30 days by default), each with what was refunded of it since, summed from
 * the ledger at every call: never a stored total that an event could have counted twice.
 */
export async function publisherEarnings({ db, clock }: Deps, developer: DeveloperAccount, query: { from?: string; to?: string }) {
  const range = statsRange(query, clock());
  const sales = await ledgerStore(db).salesOf(developer.publisherId, storableInstant(Date.parse(range.from)), storableInstant(Date.parse(range.to) + DAY_MS));
  return { from: range.from, to: range.to, ...earningsOf(sales) };
}
