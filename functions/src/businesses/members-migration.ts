import { businessStore } from "../accounts/business-store";
import { legacyBusinessMembers, legacyMembersOf } from "../accounts/legacy-business-members";
import { memberStore } from "../accounts/member-store";
import { auditLog, operatorOf } from "../core/audit-log";
import { withinDeadline } from "../core/deadline";
import type { OperatorDeps } from "../deps";
import { migrationCursorStore } from "./migration-cursor-store";

/**
 * `migrate members` (§25): moves the members of businesses written the old way (in the business's
 * document) into documents of their own, a business at a time. Idempotent: a member who already
 * has a document keeps it (a change made since wins); the old fields are removed only once every
 * member has one. Resumable: where it stands is kept in `registry/membersMigration`, so a run that
 * stopped goes on after the last business it finished.
 */

const BUSINESSES_PER_PAGE = 100;
/** Members written per transaction (each write also moves a seat count and SCIM keys). */
const MEMBERS_PER_TRANSACTION = 100;

export interface MembersMigration {
  businessesRead: number;
  businessesMigrated: number;
  membersWritten: number;
}

export async function migrateMembers(deps: OperatorDeps): Promise<MembersMigration> {
  const cursor = migrationCursorStore(deps.db);
  const result: MembersMigration = { businessesRead: 0, businessesMigrated: 0, membersWritten: 0 };
  for (let after = await cursor.get("membersMigration"); ; ) {
    const ids = await businessStore(deps.db).idsAfter(after, BUSINESSES_PER_PAGE);
    for (const id of ids) {
      const written = await migrateBusiness(deps, id);
      result.businessesRead += 1;
      if (written !== null) {
        result.businessesMigrated += 1;
        result.membersWritten += written;
      }
      await cursor.set("membersMigration", id);
    }
    if (ids.length < BUSINESSES_PER_PAGE) break;
    after = ids.at(-1)!;
  }
  await cursor.clear("membersMigration");
  return result;
}

/** One business: its members' documents, then the old fields gone. Null when it held nothing of the old shape. */
async function migrateBusiness(deps: OperatorDeps, businessId: string): Promise<number | null> {
  const { db } = deps;
  const ref = businessStore(db).ref(businessId);
  const legacy = legacyMembersOf(await withinDeadline("Firestore", ref.get()));
  if (legacy === null) return null;
  let written = 0;
  for (let start = 0; start < legacy.length; start += MEMBERS_PER_TRANSACTION) {
    const chunk = legacy.slice(start, start + MEMBERS_PER_TRANSACTION);
    written += await withinDeadline(
      "Firestore",
      db.runTransaction(async (tx) => {
        const existing = await memberStore(db).getMany(tx, businessId, chunk.map((member) => member.uid));
        const missing = chunk.filter((_, index) => existing[index] === null);
        for (const member of missing) memberStore(db).put(tx, businessId, null, member);
        return missing.length;
      }),
    );
  }
  await withinDeadline(
    "Firestore",
    db.runTransaction(async (tx) => {
      const snapshot = await tx.get(ref);
      const now = legacyMembersOf(snapshot) ?? [];
      // Members added the old way while the chunks ran are written here, or by the next run.
      const existing = await memberStore(db).getMany(tx, businessId, now.map((member) => member.uid));
      if (existing.some((member) => member === null)) throw new Error(`Business '${businessId}' gained members the old way during the migration; run it again.`);
      legacyBusinessMembers(db).clearIn(tx, snapshot);
      auditLog(db).record(tx, operatorOf(deps), { action: "business.members.migrate", target: businessId, details: { members: now.length, written } }, deps.clock());
    }),
  );
  return written;
}
