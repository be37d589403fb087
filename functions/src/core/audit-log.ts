import { Timestamp, type DocumentSnapshot, type Firestore, type Query, type Transaction, type WriteBatch } from "firebase-admin/firestore";
import { z } from "zod";
import { withDeadlines, withinDeadline } from "./deadline";
import { readDocument, timestamp } from "./documents";
import { eventOutbox, type OutboundEvent } from "./event-outbox";
import { pageOfQuery, type CursorPosition } from "./pagination";

/**
 * `auditLog/{autoId}`: who did what to what (contract §14), append-only. Every security-relevant
 * change adds its entry in the same batch or transaction as the change itself, so there is never
 * a change without its entry nor an entry for a change that did not happen. The entry brings what
 * commits with it: the change's outbound events (§21) and its request's Idempotency-Key (§1). Clients never read the
 * collection (rules deny all); operators read it with `audit list`, owners their modules' entries.
 */

export const ACTOR_KINDS = ["user", "developer", "token", "operator", "billing", "scim", "system", "anonymous"] as const;

/**
 * Who acted: a signed-in user (uid), a developer on the developer endpoints (uid), an access or
 * OIDC token (its id), an operator, billing (the event), a business's SCIM token (its id, §22), the
 * system, or a visitor without an account on a route that takes one optionally (a notice, §30).
 */
export interface Actor {
  kind: (typeof ACTOR_KINDS)[number];
  id: string;
  /** The API request it came in, when it came in one. */
  requestId?: string;
  /** What commits with every change this actor makes: its request's Idempotency-Key record (§1, core/idempotency.ts). */
  commitsWith?: CommitsWithChange;
}

/** A write that joins the batch or transaction of each change an actor commits, with the answer the change gives (AuditEvent.answer). */
export interface CommitsWithChange {
  addTo(writer: WriteBatch | Transaction, answer: unknown): void;
}

/** A visitor without an account, in one request. */
export const anonymousActor = (requestId: string): Actor => ({ kind: "anonymous", id: "anonymous", requestId });

/** The service itself, or a tool of it (the seed, the bench), acting on its own. */
export const systemActor = (id: string): Actor => ({ kind: "system", id });

/** The operator of an operator operation: the CLI names them; other callers (seed, tests) are the system. */
export const operatorOf = (deps: { actor?: Actor }): Actor => deps.actor ?? systemActor("service");

export interface AuditEvent {
  /** e.g. "module.sign", "release.rollout", "entitlement.grant". */
  action: string;
  /** What it acted on: a module id, `moduleId@version`, a release id, a uid, a SHA-256. */
  target: string;
  details?: Record<string, unknown>;
  /** What the change tells the webhooks (§21): recorded in the outbox with the entry, in its batch or transaction. */
  emits?: OutboundEvent[];
  /**
   * What the request answers once this change commits (the body of its route's success answer),
   * when the change is the request's last: kept with the request's Idempotency-Key in the same
   * commit (§1), so that a retry gets it even when the request's own answer is lost with its
   * instance. Not part of the entry.
   */
  answer?: unknown;
}

export interface AuditRecord extends Required<Omit<AuditEvent, "emits" | "answer">> {
  id: string;
  at: Date;
  actor: { kind: Actor["kind"]; id: string };
  requestId: string | null;
}

const auditDocument = z.object({
  at: timestamp,
  actor: z.object({ kind: z.enum(ACTOR_KINDS), id: z.string() }),
  action: z.string(),
  target: z.string(),
  /** The target and what contains it (a version's module), for `--target` and owners' lists. */
  subjects: z.array(z.string()),
  requestId: z.string().optional(),
  details: z.record(z.string(), z.unknown()),
});

/** A version's entries are found by its module too. */
const subjectsOf = (target: string) => [...new Set([target, target.split("@")[0]])];

export interface AuditQuery {
  subject?: string;
  since?: Date;
  after?: CursorPosition;
  limit: number;
}

export function auditLog(db: Firestore) {
  const collection = db.collection("auditLog");
  const read = (snapshot: DocumentSnapshot): AuditRecord => {
    const stored = readDocument(auditDocument, snapshot)!;
    return {
      id: snapshot.id,
      at: stored.at.toDate(),
      actor: stored.actor,
      action: stored.action,
      target: stored.target,
      requestId: stored.requestId ?? null,
      details: stored.details,
    };
  };
  const data = (actor: Actor, event: AuditEvent, at: Date) => ({
    at: Timestamp.fromDate(at),
    actor: { kind: actor.kind, id: actor.id },
    action: event.action,
    target: event.target,
    subjects: subjectsOf(event.target),
    ...(actor.requestId ? { requestId: actor.requestId } : {}),
    // Plain JSON values only: no undefined (Firestore refuses it), dates as strings.
    details: JSON.parse(JSON.stringify(event.details ?? {})) as Record<string, unknown>,
  });
  return {
    /** Adds an entry to a batch or transaction, to commit with the change it records. */
    record(writer: WriteBatch | Transaction, actor: Actor, event: AuditEvent, at: Date): void {
      (writer as WriteBatch).create(collection.doc(), data(actor, event, at));
      if (event.emits?.length) eventOutbox(db).record(writer, event.emits, at);
      actor.commitsWith?.addTo(writer, event.answer);
    },
    /** Commits the writes of one change together with its entry, in one batch. */
    async commit(actor: Actor, event: AuditEvent, at: Date, write: (batch: WriteBatch) => void): Promise<void> {
      const batch = db.batch();
      write(batch);
      batch.create(collection.doc(), data(actor, event, at));
      if (event.emits?.length) eventOutbox(db).record(batch, event.emits, at);
      actor.commitsWith?.addTo(batch, event.answer);
      await withinDeadline(`Firestore (${event.action})`, batch.commit());
    },
    ...withDeadlines("Firestore", {
      /** One page of entries, newest first. */
      async page(query: AuditQuery): Promise<{ entries: AuditRecord[]; more: boolean; last: CursorPosition | null }> {
        let selected: Query = collection;
        if (query.subject !== undefined) selected = selected.where("subjects", "array-contains", query.subject);
        if (query.since) selected = selected.where("at", ">=", Timestamp.fromDate(query.since));
        const found = await pageOfQuery(selected, "at", query);
        return { entries: found.docs.map(read), more: found.more, last: found.last };
      },
    }),
  };
}
