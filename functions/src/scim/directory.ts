import type { Transaction } from "firebase-admin/firestore";
import type { BusinessRecord } from "../accounts/business-records";
import { memberStore } from "../accounts/member-store";
import type { SubscriptionRecord } from "../accounts/subscription-store";
import type { Deps } from "../deps";
import { giveSeats, seatLedger, type MemberChange } from "../seats/ledger";
import { project, ScimError, type ScimResource } from "./resources";
import { reconcileDirectory } from "./rules";


/**
 * SCIM Users and Groups of a business (§22, §25): what users.ts and groups.ts share. Every change
 * is one transaction on the members it touches (one document each), the business's document
 * (read: its settings and groups; written only when a group changes), the seat shards (a seat
 * given reads the shard it is offered in first; seats/ledger.ts) and the SCIM keys (read: a duplicate userName
 * has one winner under any concurrency); the audit entry of the change carries its
 * `business.member.*` events. Auth users are found or made before it, and disabled or enabled
 * after it (again on a retry, so a crash in between is mended by the provider's next sync).
 */

export type Query = { attributes?: string | string[]; excludedAttributes?: string | string[] };
export type Projected = { resource: Record<string, unknown>; version: string; location: string };

/** The most SCIM groups one business may have (they live in its document). */
export const MAX_GROUPS = 300;
/** The most members one request may move into or out of a group: one transaction writes them all (two documents and an event each), within Firestore's 500 writes. */
export const MAX_MEMBERS_MOVED = 150;

export const answer = (resource: ScimResource, query: Query): Projected => ({ resource: project(resource, query), version: String(resource.meta.version), location: String(resource.meta.location) });

export function present(business: BusinessRecord | null): BusinessRecord {
  // The token outlived its business (an operator deleted it): nothing to provision into.
  if (!business) throw new ScimError(401, null, "The SCIM token's business no longer exists.");
  return business;
}

/** Whether an If-Match names versions to check (none, or `*`: any version matches). */
export const namesVersion = (ifMatch: string | undefined): ifMatch is string => ifMatch !== undefined && ifMatch.trim() !== "*";

export function assertVersion(resource: ScimResource, ifMatch: string | undefined): void {
  if (!namesVersion(ifMatch)) return;
  const wanted = ifMatch.split(",").map((tag) => tag.trim());
  if (!wanted.includes(String(resource.meta.version))) throw new ScimError(412, null, `The resource has changed: its version is ${String(resource.meta.version)}.`);
}

/**
 * Writes members after a change, with the roles and seats the groups and settings call for: the
 * seats given up go to those waiting longest, and the change's members who wait for one take a
 * free one (seats/ledger.ts reads what it needs before any write). Returns every change.
 */
export async function settle(tx: Transaction, deps: Deps, business: BusinessRecord, subscription: SubscriptionRecord | null, changes: MemberChange[], now: Date): Promise<MemberChange[]> {
  const members = memberStore(deps.db);
  const reconciled = new Map(reconcileDirectory({ settings: business.scimSettings, groups: business.scimGroups }, changes.map(({ after }) => after), now).map((member) => [member.uid, member]));
  const ledger = seatLedger(deps.db, tx, business.id, subscription?.seats ?? null);
  const settled = await giveSeats(deps.db, ledger, tx, business.id, changes.map(({ before, after }) => ({ before, after: reconciled.get(after.uid) ?? after })), now);
  for (const { before, after } of settled) members.put(tx, business.id, before, after);
  return settled;
}
