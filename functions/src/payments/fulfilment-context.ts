import type { Transaction } from "firebase-admin/firestore";
import type { Actor } from "../core/audit-log";
import type { Deps } from "../deps";
import type { StripeEventSubject } from "./stripe-event-store";

/** What every handler of a §20 event is given and answers (fulfilment.ts runs them, each in its event's transaction). */
export interface Context {
  deps: Deps;
  tx: Transaction;
  now: Date;
  actor: Actor;
}

export interface Applied {
  outcome: "applied" | "stale" | "ignored";
  subject: StripeEventSubject;
  reason?: string;
}

export type Handler = (context: Context) => Promise<Applied>;
