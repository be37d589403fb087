import { eventOutbox } from "../core/event-outbox";
import type { TufDeps } from "./online-roles";
import { tufRepositoryStore, type RepositoryState, type RoleStamp } from "./repository-store";
import { expiryWarnings, expiryWarningText } from "./rules";

/** Where the TUF repository stands (§23): `tuf status`, and the answer of its operations. */

export interface RepositoryStatus {
  root: RoleStamp;
  targets: RoleStamp;
  snapshot: RoleStamp;
  timestamp: RoleStamp;
  bins: { count: number; lowestVersion: number; highestVersion: number; firstExpires: string };
  onlineKeyId: string;
  rotating: boolean;
  /** Changes recorded in the outbox that the repository has not taken yet. */
  pendingChanges: number;
  /** Root or targets expiring within 30 days (or expired): renew them with `tuf rotate`. */
  warnings: string[];
}

export function statusOf(state: RepositoryState, pending: number, now: Date): RepositoryStatus {
  const bins = Object.values(state.bins);
  return {
    root: state.root,
    targets: state.targets,
    snapshot: state.snapshot,
    timestamp: { version: state.timestamp.version, expires: state.timestamp.expires },
    bins: {
      count: bins.length,
      lowestVersion: Math.min(...bins.map((bin) => bin.version)),
      highestVersion: Math.max(...bins.map((bin) => bin.version)),
      firstExpires: bins.map((bin) => bin.expires).sort()[0],
    },
    onlineKeyId: state.onlineKeyId,
    rotating: state.rotatingSince !== null,
    pendingChanges: pending,
    warnings: expiryWarnings(state, now).map(expiryWarningText),
  };
}

export async function repositoryStatus(deps: Pick<TufDeps, "db" | "clock">): Promise<RepositoryStatus> {
  const state = await tufRepositoryStore(deps.db).state();
  if (!state) throw new Error("The TUF repository is not initialised: run `tuf init` first.");
  return statusOf(state, await pendingCount(deps), deps.clock());
}

export async function pendingCount(deps: Pick<TufDeps, "db">): Promise<number> {
  return eventOutbox(deps.db).tufPendingCount();
}
