import { Timestamp, type DocumentSnapshot, type Firestore, type Transaction } from "firebase-admin/firestore";
import { z } from "zod";
import { POLICY_MODES, type Policy } from "../access/install-policy";
import { withDeadlines } from "../core/deadline";
import { documentAt, oncePerDatabase, readDocument, timestamp } from "../core/documents";

/**
 * `businessPolicies/{businessId}`: a business's install policy (§26), written by its owners and
 * admins, read with a member's own data at every request that installs (caller-data), so that a
 * change holds on every instance at once. At most 500 rules: under 200 KB.
 */

const policyDocument = z.object({
  mode: z.enum(POLICY_MODES),
  rules: z.array(
    z.object({
      effect: z.enum(["allow", "block"]),
      publisher: z.string().optional(),
      module: z.string().optional(),
      versions: z.string().optional(),
      reason: z.string().optional(),
    }),
  ),
  // Stored as pairs: module ids are caller-chosen, and never become a stored object's keys.
  minimumVersions: z.array(z.object({ module: z.string(), version: z.string() })),
  required: z.array(z.string()),
  message: z.string().nullable(),
  version: z.number().int().positive(),
  updatedAt: timestamp,
});

export const policyStore = oncePerDatabase((db: Firestore) => {
  const collection = db.collection("businessPolicies");
  const read = (businessId: string, snapshot: DocumentSnapshot): Policy | null => {
    const stored = readDocument(policyDocument, snapshot);
    if (!stored) return null;
    const minimumVersions: Record<string, string> = Object.create(null);
    for (const { module, version } of stored.minimumVersions) minimumVersions[module] = version;
    return {
      businessId,
      mode: stored.mode,
      rules: stored.rules,
      minimumVersions,
      required: stored.required,
      message: stored.message,
      version: stored.version,
      updatedAt: stored.updatedAt.toDate(),
    };
  };
  return withDeadlines("Firestore", {
    async get(tx: Transaction | null, businessId: string): Promise<Policy | null> {
      const ref = documentAt(collection, businessId);
      return read(businessId, tx ? await tx.get(ref) : await ref.get());
    },
    /** One batched read of several businesses' policies, in their order (null: the business has none). */
    async getMany(businessIds: string[]): Promise<(Policy | null)[]> {
      if (businessIds.length === 0) return [];
      const snapshots = await db.getAll(...businessIds.map((id) => documentAt(collection, id)));
      return snapshots.map((snapshot, index) => read(businessIds[index], snapshot));
    },
    setIn(tx: Transaction, policy: Policy): void {
      tx.set(documentAt(collection, policy.businessId), {
        mode: policy.mode,
        rules: policy.rules.map((rule) => Object.fromEntries(Object.entries(rule).filter(([, value]) => value !== undefined))),
        minimumVersions: Object.entries(policy.minimumVersions).map(([module, version]) => ({ module, version })),
        required: policy.required,
        message: policy.message,
        version: policy.version,
        updatedAt: Timestamp.fromDate(policy.updatedAt),
      });
    },
  });
});
