import { Timestamp, type DocumentSnapshot, type Firestore } from "firebase-admin/firestore";
import { z } from "zod";
import { withDeadlines } from "../core/deadline";
import { readDocument, timestamp } from "../core/documents";

/** `users/{uid}/activations/{moduleId}`: which modules a user confirmed, written by the service. */

const activationDocument = z.object({
  moduleId: z.string(),
  version: z.string(),
  deviceId: z.string().optional(),
  activatedAt: timestamp,
  updatedAt: timestamp,
});

export interface Activation {
  moduleId: string;
  version: string;
  deviceId: string | null;
  activatedAt: Date;
  updatedAt: Date;
}

export function activationStore(db: Firestore) {
  const collection = (uid: string) => db.collection("users").doc(uid).collection("activations");
  const read = (snapshot: DocumentSnapshot): Activation | null => {
    const stored = readDocument(activationDocument, snapshot);
    return (
      stored && {
        moduleId: stored.moduleId,
        version: stored.version,
        deviceId: stored.deviceId ?? null,
        activatedAt: stored.activatedAt.toDate(),
        updatedAt: stored.updatedAt.toDate(),
      }
    );
  };
  const toDocument = (activation: Activation) => ({
    moduleId: activation.moduleId,
    version: activation.version,
    ...(activation.deviceId ? { deviceId: activation.deviceId } : {}),
    activatedAt: Timestamp.fromDate(activation.activatedAt),
    updatedAt: Timestamp.fromDate(activation.updatedAt),
  });
  return withDeadlines("Firestore", {
    ref: (uid: string, moduleId: string) => collection(uid).doc(moduleId),
    read,
    async get(uid: string, moduleId: string): Promise<Activation | null> {
      return read(await collection(uid).doc(moduleId).get());
    },
    /** Whether the user activated each of these modules: one batched read. */
    async existing(uid: string, moduleIds: string[]): Promise<boolean[]> {
      if (moduleIds.length === 0) return [];
      return (await db.getAll(...moduleIds.map((id) => collection(uid).doc(id)))).map((snapshot) => snapshot.exists);
    },
    /** Every activation of a user, oldest first. */
    async list(uid: string): Promise<Activation[]> {
      return (await collection(uid).orderBy("activatedAt").get()).docs.map((snapshot) => read(snapshot)!);
    },
    /** Creates the first activation; rejects (ALREADY_EXISTS) when there is one. */
    async create(uid: string, activation: Activation): Promise<void> {
      await collection(uid).doc(activation.moduleId).create(toDocument(activation));
    },
    /** A repeat confirmation: the version, device and time move; `activatedAt` stays. */
    async refresh(uid: string, activation: Omit<Activation, "activatedAt">): Promise<void> {
      await collection(uid)
        .doc(activation.moduleId)
        .update({
          version: activation.version,
          updatedAt: Timestamp.fromDate(activation.updatedAt),
          ...(activation.deviceId ? { deviceId: activation.deviceId } : {}),
        });
    },
  });
}
