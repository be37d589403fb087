/**
 * The deployed background functions, run on the local stack the way Cloud Functions runs them
 * (contract §21 and §23 "As deployed"): the exported handlers of `functions/src/index.ts`
 * themselves, nothing written for the local stack in their place. A Firestore trigger's handler
 * is invoked with the event Cloud Functions would give it, for each document its listener sees
 * created or written (as the emulator's triggers would fire); a scheduled function's on a timer,
 * as Cloud Scheduler calls it, more often than deployed where a minute would make the local stack
 * and the tests wait. The handlers read their configuration from the environment, as deployed:
 * set it before the first event. `npm start`, the tests and the bench run them through here;
 * nothing deployed imports it.
 */
import { randomUUID } from "node:crypto";
import type { DocumentSnapshot, Firestore, Query, QueryDocumentSnapshot } from "firebase-admin/firestore";
import { Change, type CloudEvent, type CloudFunction } from "firebase-functions/v2";
import type { FirestoreEvent } from "firebase-functions/v2/firestore";
import type { ScheduledEvent } from "firebase-functions/v2/scheduler";
import { subscriptionStore } from "./accounts/subscription-store";
import { eventOutbox } from "./core/event-outbox";
import { directoryJobStore } from "./scim/directory-job-store";

type Functions = typeof import("./index");

/**
 * The Firestore triggers, each with the documents it acts on (the query its listener follows), the
 * kind of its event, and the name of its path's wildcard. Deployed they fire on every create or
 * write; here, for each document the query names when it starts and whenever one is added to it or
 * changes in it: what the handler would return at once for is not followed.
 */
const TRIGGERS = {
  webhookEvents: { query: (db: Firestore) => eventOutbox(db).notFannedOutQuery(), kind: "created", param: "eventId" },
  tufEvents: { query: (db: Firestore) => eventOutbox(db).tufPendingQuery(), kind: "created", param: "eventId" },
  seatBalance: { query: (db: Firestore) => subscriptionStore(db).pendingSeatBalancesQuery(), kind: "written", param: "businessId" },
  scimDirectoryJob: { query: (db: Firestore) => directoryJobStore(db).query(), kind: "created", param: "jobId" },
} satisfies Partial<Record<keyof Functions, { query: (db: Firestore) => Query; kind: "created" | "written"; param: string }>>;

type TriggerName = keyof typeof TRIGGERS;
type ScheduleName = "webhookSweep" | "tufMaintenance" | "seatSweep" | "metricFold" | "scimDirectorySweep";

export interface DeployedFunctionsOptions {
  /** The triggers to fire for the documents they act on, from now on (and those waiting when it starts). */
  triggers: TriggerName[];
  /** The scheduled functions to run, each every so many milliseconds. */
  schedules: Partial<Record<ScheduleName, number>>;
  /** Where a handler's failure is told (deployed: the function's log, and the sweep tries again). */
  warn: (message: string, details: Record<string, unknown>) => void;
}

export interface DeployedFunctions {
  /** Stops firing and running; resolves once every handler under way has ended. */
  stop(): Promise<void>;
}

/** The event Cloud Functions gives the trigger for this document (`written`: as after a write; what it was before is not known here). */
function eventOf(name: TriggerName, snapshot: QueryDocumentSnapshot): FirestoreEvent<unknown, Record<string, string>> {
  const projectId = process.env.GCLOUD_PROJECT ?? "demo-marketplace";
  const { kind, param } = TRIGGERS[name];
  return {
    specversion: "1.0",
    id: randomUUID(),
    source: `//firestore.googleapis.com/projects/${projectId}/databases/(default)`,
    type: `google.cloud.firestore.document.v1.${kind}`,
    time: new Date().toISOString(),
    subject: `documents/${snapshot.ref.path}`,
    location: "us-central1",
    project: projectId,
    database: "(default)",
    namespace: "(default)",
    document: snapshot.ref.path,
    params: { [param]: snapshot.id },
    data: kind === "created" ? snapshot : new Change<DocumentSnapshot | undefined>(undefined, snapshot),
  };
}

export async function runDeployedFunctions(db: Firestore, options: DeployedFunctionsOptions): Promise<DeployedFunctions> {
  const functions: Functions = await import("./index");
  const running = new Set<Promise<unknown>>();
  let stopped = false;
  const track = <T>(work: Promise<T>, what: string, details: Record<string, unknown>) => {
    const tracked = work.catch((error: Error) => options.warn(`${what} failed; its sweep tries again`, { ...details, error: error.message }));
    running.add(tracked);
    void tracked.finally(() => running.delete(tracked));
    return tracked;
  };

  const unsubscribes = options.triggers.map((name) => {
    const trigger = functions[name] as unknown as CloudFunction<CloudEvent<unknown>>;
    /** Each document once per listener and version (a created trigger: once), as a trigger fires once per write. */
    const fired = new Set<string>();
    const { kind, query } = TRIGGERS[name];
    return query(db).onSnapshot(
      (snapshot) => {
        for (const change of snapshot.docChanges()) {
          const firing = kind === "created" ? change.doc.id : `${change.doc.id}@${change.doc.updateTime.toMillis()}`;
          if (stopped || change.type === "removed" || (kind === "created" && change.type !== "added") || fired.has(firing)) continue;
          fired.add(firing);
          track(Promise.resolve(trigger.run(eventOf(name, change.doc))), name, { document: change.doc.ref.path });
        }
      },
      (error) => options.warn(`the ${name} trigger's listener stopped; its sweep takes what waits`, { error: error.message }),
    );
  });

  const runSchedule = (name: ScheduleName): Promise<void> => {
    if (stopped) return Promise.resolve();
    return track(Promise.resolve(functions[name].run({ scheduleTime: new Date().toISOString(), jobName: name } as ScheduledEvent)), name, {}).then(() => undefined);
  };
  // Cloud Scheduler calls a function when its time comes, whether or not the run before has ended:
  // deployed, a run lasts at most its timeout (120 s for a sweep every minute), so two may overlap.
  // Here the period is shorter than a run may last, so at most two run at once all the same.
  const timers = Object.entries(options.schedules).map(([name, everyMs]) => {
    let runs = 0;
    const timer = setInterval(() => {
      if (runs >= 2 || stopped) return;
      runs += 1;
      void runSchedule(name as ScheduleName).finally(() => (runs -= 1));
    }, everyMs);
    timer.unref();
    return timer;
  });

  return {
    async stop() {
      stopped = true;
      unsubscribes.forEach((unsubscribe) => unsubscribe());
      timers.forEach(clearInterval);
      while (running.size > 0) await Promise.allSettled([...running]);
    },
  };
}
