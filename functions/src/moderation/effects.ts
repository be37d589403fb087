import type { Firestore, Transaction } from "firebase-admin/firestore";
import { moduleNotFound } from "../access/visibility";
import { withinDeadline } from "../core/deadline";
import { auditLog, operatorOf } from "../core/audit-log";
import { catalogChanges, moduleChange } from "../core/catalog-changes";
import { ApiError } from "../core/errors";
import { readJoined, type JoinedChange } from "../core/joined-change";
import type { OperatorDeps } from "../deps";
import { developerStore } from "../developers/developer-store";
import { moduleStore } from "../marketplace/module-store";
import { revokeModule, unrevokeModule } from "../revocations/service";
import { setReviewHidden } from "../reviews/service";
import type { DecisionRecord } from "./decision-store";

/**
 * What a decision does (contract §30), and what its reversal undoes, each committed with the
 * decision's own records (`joined`): §14's revocation and §18's hiding are those services' own
 * changes; a module's restriction and a publisher's suspension take them out of every list (the
 * catalog skips them; pages stay) through the catalog's feed, so every instance follows within §13's 2 s.
 */

const reasonOf = (decision: DecisionRecord) => `Moderation decision ${decision.id} (${decision.ground}: ${decision.reference})`.slice(0, 500);

/** Applies a decision's effect with `joined`, in one transaction. */
export async function applyEffect(deps: OperatorDeps, decision: DecisionRecord, joined: JoinedChange): Promise<void> {
  const { moduleId, version, reviewId } = decision;
  switch (decision.decision) {
    case "no_action":
      return commitJoined(deps.db, joined);
    case "remove":
      if (reviewId) return void (await setReviewHidden(deps, { moduleId, reviewId, reason: reasonOf(decision) }, true, joined));
      return void (await revokeModule(deps, { moduleId, ...(version ? { version } : {}), reason: reasonOf(decision) }, { joined }));
    case "restrict_visibility":
      return restrictModule(deps, decision, true, joined);
    case "suspend_publisher":
      return suspendPublisher(deps, decision, true, joined);
  }
}

/** Undoes a decision's effect with `joined`, in one transaction (an appeal that reversed it). What is undone already stays so. */
export async function undoEffect(deps: OperatorDeps, decision: DecisionRecord, joined: JoinedChange): Promise<void> {
  const { moduleId, version, reviewId } = decision;
  switch (decision.decision) {
    case "no_action":
      return commitJoined(deps.db, joined);
    case "remove":
      if (reviewId) return void (await setReviewHidden(deps, { moduleId, reviewId }, false, joined));
      return void (await unrevokeModule(deps, { moduleId, ...(version ? { version } : {}) }, { joined, liftedAlready: "ok" }));
    case "restrict_visibility":
      return restrictModule(deps, decision, false, joined);
    case "suspend_publisher":
      return suspendPublisher(deps, decision, false, joined);
  }
}

/** Commits a joined change on its own (a decision without an effect, an appeal upheld). */
export async function commitJoined(db: Firestore, joined: JoinedChange): Promise<void> {
  await withinDeadline(
    "Firestore",
    db.runTransaction(async (tx) => (await joined(tx))(tx)),
  );
}

/** Restricts a module's visibility for a decision, or lifts the restriction that decision made. */
async function restrictModule(deps: OperatorDeps, decision: DecisionRecord, restrict: boolean, joined: JoinedChange): Promise<void> {
  const { db, clock } = deps;
  const modules = moduleStore(db);
  const topics = moduleChange(decision.moduleId);
  const now = clock();
  await withinDeadline(
    "Firestore",
    db.runTransaction(async (tx: Transaction) => {
      const writeJoined = await readJoined(tx, joined);
      const module = modules.readModule(await tx.get(modules.moduleRef(decision.moduleId)));
      if (!module) throw moduleNotFound(decision.moduleId);
      // A reversal lifts only its own decision's restriction: a later decision's stands.
      const lifts = !restrict && module.restriction?.decisionId === decision.id;
      if (restrict || lifts) {
        modules.setModule(tx, { ...module, restriction: restrict ? { decisionId: decision.id, at: now } : null });
        catalogChanges(db).record(tx, topics);
        auditLog(db).record(tx, operatorOf(deps), { action: restrict ? "module.restrict" : "module.unrestrict", target: module.id, details: { decisionId: decision.id } }, now);
      }
      writeJoined(tx);
    }),
  );
  catalogChanges(db).applied(topics);
}

/** Suspends the module's publisher for a decision, or lifts the suspension that decision made. */
async function suspendPublisher(deps: OperatorDeps, decision: DecisionRecord, suspend: boolean, joined: JoinedChange): Promise<void> {
  const { db, clock } = deps;
  const publishers = developerStore(db);
  // Every one of the publisher's modules leaves (or comes back to) the lists: one feed entry names them all.
  const topics = [...new Set((await moduleStore(db).byPublisher(decision.publisherId)).flatMap((module) => moduleChange(module.id)))];
  const now = clock();
  await withinDeadline(
    "Firestore",
    db.runTransaction(async (tx: Transaction) => {
      const writeJoined = await readJoined(tx, joined);
      const claim = await publishers.claimIn(tx, decision.publisherId);
      if (!claim) throw new ApiError("publisher_not_found", `Nobody holds the publisher id '${decision.publisherId}' any more.`);
      const lifts = !suspend && claim.suspension?.decisionId === decision.id;
      if (suspend || lifts) {
        publishers.setSuspension(tx, decision.publisherId, suspend ? { decisionId: decision.id, at: now } : null);
        if (topics.length > 0) catalogChanges(db).record(tx, topics);
        auditLog(db).record(tx, operatorOf(deps), { action: suspend ? "publisher.suspend" : "publisher.unsuspend", target: decision.publisherId, details: { decisionId: decision.id } }, now);
      }
      writeJoined(tx);
    }),
  );
  if (topics.length > 0) catalogChanges(db).applied(topics);
}
