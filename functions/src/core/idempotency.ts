import { createHash } from "node:crypto";
import type { Firestore } from "firebase-admin/firestore";
import { runToCompletion } from "./deadline";
import { ApiError, invalidRequest } from "./errors";
import type { CommitsWithChange } from "./audit-log";
import { commitMark, idempotencyKeyStore, type KeyClaim, type StoredAnswer } from "./idempotency-store";
import type { Logger } from "./logger";

/**
 * Safe retries (contract §1): a POST that creates or changes something, sent with an
 * `Idempotency-Key`, does its work once per caller and key; a repeat with the same body gets the
 * first answer again. The key is claimed before the work starts, and the work then runs to its end
 * whatever happens to the answer (deadline.ts's runToCompletion): when the caller was answered 503
 * because the request's time ran out, the work still finishes, and its answer is recorded for the
 * retry. So a 503 never means "maybe done": either the work is recorded (and replayed) or the key
 * is given up (and the retry runs it).
 *
 * The key's record commits with the change itself: the request's actor carries a mark
 * (`commitsWith`) that the audit log adds to the batch or transaction of every change it records,
 * conditional on the claim still holding. A change that committed therefore always finds its key,
 * which is never taken over: not after a failure, a timeout, nor a lost instance. And the answer
 * commits with it: a change hands the mark the body it answers (AuditEvent.answer), and the route
 * knows its success status, so the key is `done` with the request's answer in the commit that made
 * the change. A retry replays it at once, even while the first attempt is still running, and
 * whatever happens to that attempt after its commit (an error, a deadline, a lost instance).
 *
 * Only successful answers are kept: an answer of 4xx changed nothing, and a 5xx or a failure ends
 * in nothing changed (each change is one batch or transaction) unless its change committed with
 * its answer, so the key is given up and a retry runs the work afresh. An attempt whose instance
 * died before its change committed holds the key until its lease runs out. A change that
 * committed without its answer (an earlier change of a request that makes several) leaves the key
 * `committed`: a retry waits for the answer (409 request_in_progress with Retry-After) while the
 * attempt's lease runs, and past it is told the change stands (409, without Retry-After) rather
 * than doing the work again.
 */

/** 1–255 printable ASCII characters. */
const IDEMPOTENCY_KEY = /^[\x20-\x7e]{1,255}$/;
/**
 * How long an attempt holds its key: well past the request's deadline and the Firestore client's
 * own retries, so that a slow attempt is never run twice; past it, the attempt is taken for dead
 * (its instance gone) and a retry runs the work again.
 */
export const IDEMPOTENCY_LEASE_MS = 5 * 60 * 1000;
const IN_PROGRESS_RETRY_AFTER_SECONDS = 1;

export interface IdempotentAnswer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface IdempotentRequest {
  /** Whose key it is: the caller's uid, or "anonymous" on public routes. */
  scope: string;
  key: string;
  /** What the request asks (method, path, body): a repeat must ask the same. */
  fingerprint: string;
  /** Top-level answer fields shown only once (a token, a secret): replays carry null. */
  secrets: readonly string[];
  /**
   * The route's answer once its change commits, when it has one kind of success: its status, and
   * whether it has a body (the change then hands the body to the commit; without one, nothing is
   * kept there and the request records its answer after).
   */
  success?: { status: number; body: boolean };
}

/** The request's Idempotency-Key, or null without one; a malformed one is a 400. */
export function idempotencyKeyOf(header: string | undefined): string | null {
  if (header === undefined) return null;
  if (!IDEMPOTENCY_KEY.test(header)) {
    throw invalidRequest("Idempotency-Key must be 1 to 255 printable ASCII characters.", [
      { path: "Idempotency-Key", message: "Expected 1-255 printable ASCII characters." },
    ]);
  }
  return header;
}

/** A request's fingerprint: its method, path and body (JSON compared by value, whatever the key order). */
export function requestFingerprint(method: string, path: string, body: unknown): string {
  const hash = createHash("sha256").update(`${method} ${path}\n`);
  if (Buffer.isBuffer(body)) hash.update(body);
  else hash.update(canonicalJson(body) ?? "");
  return hash.digest("hex");
}

function canonicalJson(value: unknown): string | undefined {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item) ?? "null").join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

export function idempotencyKeys(deps: { db: Firestore; clock: () => Date; logger: Logger }) {
  const store = idempotencyKeyStore(deps.db);

  /** A claim on the key for this attempt, or the first attempt's answer to replay. */
  async function claimOrReplay(request: IdempotentRequest): Promise<KeyClaim | IdempotentAnswer> {
    const { scope, key, fingerprint } = request;
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const now = deps.clock();
      const leaseUntil = new Date(now.getTime() + IDEMPOTENCY_LEASE_MS);
      const claimed = await store.claim(scope, key, fingerprint, now, leaseUntil);
      if (claimed) return claimed;
      const found = await store.read(scope, key);
      if (!found) continue; // given up meanwhile: claim it afresh
      const { record, updateTime } = found;
      const live = record.expireAt > now;
      if (live && record.fingerprint !== fingerprint) {
        throw new ApiError("idempotency_key_reused", "This Idempotency-Key was used with another request (method, path or body); use a new key for a new request.");
      }
      if (live && record.state === "done") return replayOf(record.answer);
      if (live && record.state !== "done" && record.leaseUntil > now) throw inProgress();
      if (live && record.state === "committed") throw answerLost();
      const takenOver = await store.takeOver(scope, key, updateTime, fingerprint, now, leaseUntil);
      if (takenOver) return takenOver;
    }
    throw inProgress();
  }

  return {
    /** The answer of `work`, done once for the request's key; a repeat gets the first answer again. */
    async run(request: IdempotentRequest, work: (commitsWith: CommitsWithChange | undefined) => Promise<IdempotentAnswer>): Promise<IdempotentAnswer> {
      // The claim too runs to its end: a claim abandoned at a deadline could land later and hold
      // the key with nobody to finish the work.
      return runToCompletion(async () => {
        const claimed = await claimOrReplay(request);
        if (!("ref" in claimed)) return claimed;
        let result: IdempotentAnswer;
        try {
          result = await work(commitMark(claimed, (body) => answerInCommit(request, body)));
        } catch (error) {
          await store.release(claimed).catch((failure) => deps.logger.error("idempotency key not released", { error: String(failure) }));
          throw error;
        }
        await (result.status < 300 ? store.finish(claimed, storedAnswer(result, request.secrets)) : store.release(claimed)).catch((failure) =>
          deps.logger.error("idempotency key not recorded", { error: String(failure) }),
        );
        return result;
      });
    },
  };
}

const answerLost = () =>
  new ApiError(
    "request_in_progress",
    "The first request with this Idempotency-Key made its change, but its answer was lost before it was recorded: the change stands, so read the resource instead of retrying.",
  );

const inProgress = () =>
  new ApiError("request_in_progress", "A request with this Idempotency-Key is still running; retry shortly with the same key.", {
    headers: { "Retry-After": String(IN_PROGRESS_RETRY_AFTER_SECONDS) },
  });

function storedAnswer(answer: IdempotentAnswer, secrets: readonly string[]): StoredAnswer {
  let body = answer.body;
  if (secrets.length > 0 && body !== null && typeof body === "object" && !Array.isArray(body)) {
    body = { ...body, ...Object.fromEntries(secrets.filter((field) => field in (body as object)).map((field) => [field, null])) };
  }
  return { status: answer.status, body: body === undefined ? "" : JSON.stringify(body), headers: answer.headers ?? {} };
}

/** The answer a committed change gives, as the key keeps it; null when the route's success answer is not known from the change. */
function answerInCommit(request: IdempotentRequest, body: unknown): StoredAnswer | null {
  const { success } = request;
  if (!success || success.body !== (body !== undefined)) return null;
  return storedAnswer({ status: success.status, ...(body === undefined ? {} : { body }) }, request.secrets);
}

function replayOf(stored: StoredAnswer): IdempotentAnswer {
  return {
    status: stored.status,
    ...(stored.body === "" ? {} : { body: JSON.parse(stored.body) as unknown }),
    headers: { ...stored.headers, "Idempotency-Replayed": "true" },
  };
}
