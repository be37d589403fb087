import type { MemberRecord } from "../accounts/business-records";
import { memberStore } from "../accounts/member-store";
import { inBusinessTransaction } from "../businesses/membership";
import { auditLog, systemActor } from "../core/audit-log";
import type { Deps } from "../deps";
import { memberEvents } from "../seats/member-events";
import { present, settle } from "./directory";
import { directoryJobStore, type DirectoryJob } from "./directory-job-store";
import { groupStateStore } from "./group-state-store";
import { reconcileDirectory } from "./rules";

/**
 * The directory jobs (§25): what a SCIM group's DELETE or a change of the SCIM settings does to a
 * business's members, run in the background a bounded batch per transaction, each member with the
 * role and seat the groups and settings now call for (a seat given up goes to whoever waits
 * longest, as in any change), so that one small request changes a directory of any size.
 * Deployed, `scimDirectoryJob` runs each job recorded and `scimDirectorySweep` every minute any an
 * instance left half-way; `npm start` runs both as deployed (local-functions.ts).
 */

/** Members a job moves per transaction: each writes its member twice, perhaps a seat shard, and its event. */
export const JOB_BATCH = 100;

const runner = systemActor("scim-directory");

/** A deleted group's members leave it, a batch per transaction; then the job is done. Returns how many left it. */
async function removeGroupFromMembers(deps: Deps, job: Extract<DirectoryJob, { kind: "group-removal" }>): Promise<number> {
  const { businessId, groupId } = job;
  const members = memberStore(deps.db);
  let removed = 0;
  for (;;) {
    const page = await members.inGroup(businessId, groupId, JOB_BATCH);
    const left = await inBusinessTransaction(deps, businessId, async (tx, state) => {
      if (page.length === 0 || !state.business) {
        directoryJobStore(deps.db).doneIn(tx, job);
        // A change that raced the DELETE may have left a revision behind.
        groupStateStore(deps.db).deleteIn(tx, businessId, groupId);
        return null;
      }
      // Read again in the change: only those still in the group move.
      const current = (await members.getMany(tx, businessId, page.map((member) => member.uid))).filter((member): member is MemberRecord => member?.groups.includes(groupId) ?? false);
      if (current.length === 0) return 0;
      const now = deps.clock();
      const moved = current.map((member) => ({ before: member, after: { ...member, groups: member.groups.filter((id) => id !== groupId) } }));
      const changes = await settle(tx, deps, state.business, state.subscription, moved, now);
      auditLog(deps.db).record(tx, runner, { action: "scim.group.members.remove", target: businessId, details: { groupId, members: moved.length }, emits: memberEvents(businessId, changes) }, now);
      return moved.length;
    });
    if (left === null) return removed;
    removed += left;
  }
}

/**
 * Every member's role and seat follow the settings: the members in the order they joined, a page
 * per transaction from where the job stands (read in that transaction, so that a settings change
 * meanwhile starts it over). Returns how many members changed.
 */
async function settleMembers(deps: Deps, job: Extract<DirectoryJob, { kind: "settle" }>): Promise<number> {
  const { businessId } = job;
  const members = memberStore(deps.db);
  const jobs = directoryJobStore(deps.db);
  let changed = 0;
  for (;;) {
    const step = await inBusinessTransaction(deps, businessId, async (tx, state) => {
      const after = await jobs.positionIn(tx, job);
      if (after === undefined) return null;
      const page = await members.page(businessId, after, JOB_BATCH);
      if (!state.business) {
        jobs.doneIn(tx, job);
        return null;
      }
      const business = present(state.business);
      const current = (await members.getMany(tx, businessId, page.slice(0, JOB_BATCH).map((member) => member.uid))).filter((member): member is MemberRecord => member !== null);
      const now = deps.clock();
      const reconciled = reconcileDirectory({ settings: business.scimSettings, groups: business.scimGroups }, current, now);
      const before = new Map(current.map((member) => [member.uid, member]));
      const changes = reconciled.length > 0 ? await settle(tx, deps, business, state.subscription, reconciled.map((member) => ({ before: before.get(member.uid)!, after: member })), now) : [];
      if (changes.length > 0) auditLog(deps.db).record(tx, runner, { action: "scim.settings.apply", target: businessId, details: { membersChanged: changes.length }, emits: memberEvents(businessId, changes) }, now);
      if (page.length <= JOB_BATCH) jobs.doneIn(tx, job);
      else jobs.movedIn(tx, job, members.positionOf(page[JOB_BATCH - 1]));
      return { changed: changes.length, done: page.length <= JOB_BATCH };
    });
    if (step === null) return changed;
    changed += step.changed;
    if (step.done) return changed;
  }
}

/** Runs a job to its end. Returns how many members it moved or changed. */
export function runDirectoryJob(deps: Deps, job: DirectoryJob): Promise<number> {
  return job.kind === "settle" ? settleMembers(deps, job) : removeGroupFromMembers(deps, job);
}

/** The jobs not done (an instance stopped half-way, a trigger missed): each run to its end. */
export async function sweepDirectoryJobs(deps: Deps): Promise<number> {
  const pending = await directoryJobStore(deps.db).pending(20);
  for (const job of pending) await runDirectoryJob(deps, job);
  return pending.length;
}
