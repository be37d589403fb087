import { businessStore } from "../accounts/business-store";
import type { MemberRecord } from "../accounts/business-records";
import { memberStore } from "../accounts/member-store";
import { seatShardStore } from "../accounts/seat-shard-store";
import { subscriptionStore } from "../accounts/subscription-store";
import { stampedFor } from "../access/seat-shards";
import { auditLog, operatorOf } from "../core/audit-log";
import { withinDeadline } from "../core/deadline";
import type { OperatorDeps } from "../deps";
import { migrationCursorStore } from "./migration-cursor-store";

/**
 * `migrate seats` (§25): seats given before the seat shards are counted in none of them (the old
 * count, `memberCounts.seats`, is no longer read), so a business's limit would let more in and a
 * freed one would take from a shard that never counted it. This counts each such seat in its
 * holder's home shard and names the shard on the holder's document, 100 holders per transaction,
 * each read again there: a holder counted since (by this run, an earlier one, or a seat change)
 * is left alone, so it is safe to run while the API serves, and again. A business whose shards
 * are not shared out for its quantity (seats counted before, or shards added since) is marked for
 * the seat balancer, which shares them out. Resumable by business (`registry/seatsMigration`).
 */

const BUSINESSES_PER_PAGE = 100;
const MEMBERS_PER_PAGE = 500;
const HOLDERS_PER_TRANSACTION = 100;

export interface SeatsMigration {
  businessesRead: number;
  seatsCounted: number;
}

export async function migrateSeats(deps: OperatorDeps): Promise<SeatsMigration> {
  const cursor = migrationCursorStore(deps.db);
  const result: SeatsMigration = { businessesRead: 0, seatsCounted: 0 };
  for (let after = await cursor.get("seatsMigration"); ; ) {
    const ids = await businessStore(deps.db).idsAfter(after, BUSINESSES_PER_PAGE);
    for (const id of ids) {
      result.seatsCounted += await migrateBusiness(deps, id);
      result.businessesRead += 1;
      await cursor.set("seatsMigration", id);
    }
    if (ids.length < BUSINESSES_PER_PAGE) break;
    after = ids.at(-1)!;
  }
  await cursor.clear("seatsMigration");
  return result;
}

async function migrateBusiness(deps: OperatorDeps, businessId: string): Promise<number> {
  const members = memberStore(deps.db);
  let counted = 0;
  for (let after: string | null = null; ; ) {
    const page: { members: MemberRecord[]; next: string | null } = await members.unshardedSeatHolders(businessId, after, MEMBERS_PER_PAGE);
    for (let start = 0; start < page.members.length; start += HOLDERS_PER_TRANSACTION) {
      const uids = page.members.slice(start, start + HOLDERS_PER_TRANSACTION).map((member) => member.uid);
      counted += await withinDeadline(
        "Firestore",
        deps.db.runTransaction(async (tx) => {
          const snapshots = await tx.getAll(...uids.map((uid) => members.ref(businessId, uid)));
          // Still holding a seat, still named in no shard.
          const holders = snapshots.filter((snapshot) => snapshot.get("seatAssignedAt") != null && snapshot.get("seatShard") === undefined).map((snapshot) => members.read(snapshot)!);
          for (const holder of holders) members.countSeatIn(tx, businessId, holder);
          if (holders.length > 0) auditLog(deps.db).record(tx, operatorOf(deps), { action: "business.seats.migrate", target: businessId, details: { seats: holders.length } }, deps.clock());
          return holders.length;
        }),
      );
    }
    if (page.next === null) break;
    after = page.next;
  }
  await withinDeadline(
    "Firestore",
    deps.db.runTransaction(async (tx) => {
      const subscription = await subscriptionStore(deps.db).get(tx, businessId);
      if (subscription?.seats == null) return;
      if (!stampedFor(await seatShardStore(deps.db).all(tx, businessId), subscription.seats)) subscriptionStore(deps.db).seatsPendingIn(tx, businessId);
    }),
  );
  return counted;
}
