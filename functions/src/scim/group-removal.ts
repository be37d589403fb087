import type { MemberRecord } from "../accounts/business-records";
import { memberStore } from "../accounts/member-store";
import { inBusinessTransaction } from "../businesses/membership";
import { auditLog, systemActor } from "../core/audit-log";
import { followWork, type FollowedWork } from "../core/followed-work";
import type { Logger } from "../core/logger";
import type { Deps } from "../deps";
import { memberEvents } from "../seats/member-events";
import { settle } from "./directory";
import { groupRemovalStore, type GroupRemoval } from "./group-removal-store";

/**
 * The group remover (§25): after a SCIM group's DELETE, its members leave it in the background,
 * REMOVAL_BATCH per transaction, each with the role and seat the groups now call for (a seat
 * given up goes to whoever waits longest, as in any change), so that a group of any size is
 * deleted by one small request. Deployed, `scimGroupRemoval` runs it on each removal recorded and
 * `scimGroupSweep` every minute for one an instance left half-way; `npm start` follows the removals.
 */

/** Members taken off a deleted group per transaction: each writes its member twice and its events. */
export const REMOVAL_BATCH = 100;

const remover = systemActor("scim-group-removal");

/** Takes the deleted group off its members, a batch per transaction, then marks the removal done. Returns how many members left it. */
export async function removeDeletedGroup(deps: Deps, removal: GroupRemoval): Promise<number> {
  const { businessId, groupId } = removal;
  const members = memberStore(deps.db);
  let removed = 0;
  for (;;) {
    const page = await members.inGroup(businessId, groupId, REMOVAL_BATCH);
    const left = await inBusinessTransaction(deps, businessId, async (tx, state) => {
      if (page.length === 0 || !state.business) {
        groupRemovalStore(deps.db).doneIn(tx, removal);
        return null;
      }
      // Read again in the change: only those still in the group move.
      const current = (await members.getMany(tx, businessId, page.map((member) => member.uid))).filter((member): member is MemberRecord => member?.groups.includes(groupId) ?? false);
      if (current.length === 0) return 0;
      const now = deps.clock();
      const moved = current.map((member) => ({ before: member, after: { ...member, groups: member.groups.filter((id) => id !== groupId) } }));
      const changes = await settle(tx, deps, state.business, state.subscription, moved, now);
      auditLog(deps.db).record(tx, remover, { action: "scim.group.members.remove", target: businessId, details: { groupId, members: moved.length }, emits: memberEvents(businessId, changes) }, now);
      return moved.length;
    });
    if (left === null) return removed;
    removed += left;
  }
}

/** The removals not finished (an instance stopped half-way, a trigger missed): each run to its end. */
export async function sweepGroupRemovals(deps: Deps): Promise<number> {
  const pending = await groupRemovalStore(deps.db).pending(20);
  for (const removal of pending) await removeDeletedGroup(deps, removal);
  return pending.length;
}

/** `npm start`: follows the removals recorded and runs each, as the deployment's trigger does. */
export function startGroupRemover(deps: Deps & { logger: Logger }, options: { sweepMs: number }): FollowedWork {
  const removals = groupRemovalStore(deps.db);
  return followWork({
    what: "group removal",
    follow: (onRemovals, onError) => removals.follow(onRemovals, onError),
    pending: () => removals.pending(20),
    run: (removal: GroupRemoval) => removeDeletedGroup(deps, removal),
    keyOf: (removal) => `${removal.businessId}/${removal.groupId}`,
    sweepMs: options.sweepMs,
    logger: deps.logger,
  });
}
