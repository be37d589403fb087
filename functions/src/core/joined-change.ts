import type { Transaction } from "firebase-admin/firestore";

/**
 * A change that commits in another service's transaction, with that service's own change: a
 * moderation decision (§30) commits with the revocation, removal or suspension it decides, so
 * there is never one without the other. Firestore runs a transaction's reads before its writes:
 * the host calls the joined change first, with its own reads, and the writer it answers after its
 * own writes. It may throw, and then nothing of either commits.
 */
export type JoinedChange = (tx: Transaction) => Promise<(tx: Transaction) => void>;

/** Runs a joined change's reads now; the writer it answers (or nothing) is called with the host's writes. */
export async function readJoined(tx: Transaction, joined: JoinedChange | undefined): Promise<(tx: Transaction) => void> {
  return joined ? joined(tx) : () => undefined;
}
