import { Timestamp, type Firestore } from "firebase-admin/firestore";
import type { Caller, DeveloperCaller } from "../core/auth";
import { COLLECTIONS, developerDocument, readDocument, toIso, type DeveloperAccount, type DeveloperDocument } from "../core/documents";
import { ApiError, invalidRequest } from "../core/errors";
import type { Deps } from "../deps";
import type { z } from "zod";
import type { developerSchema, registerWithPasswordSchema, registerWithTokenSchema } from "./schemas";

type DeveloperView = z.output<typeof developerSchema>;

export const toDeveloperView = (developer: DeveloperAccount): DeveloperView => ({
  id: developer.id,
  email: developer.email,
  displayName: developer.displayName,
  publisherId: developer.publisherId,
  createdAt: toIso(developer.createdAt),
});

export async function findDeveloper(db: Firestore, uid: string): Promise<DeveloperAccount | null> {
  const developer = readDocument(developerDocument, await db.collection(COLLECTIONS.developers).doc(uid).get());
  return developer && { id: uid, ...developer };
}

/** The "developer" auth mode: the caller must have a developer account. */
export async function requireDeveloper(db: Firestore, caller: Caller): Promise<DeveloperCaller> {
  const developer = await findDeveloper(db, caller.uid);
  if (!developer) throw new ApiError("not_a_developer", "This account has no developer account; register first.");
  return { ...caller, developer };
}

/**
 * Creates the developer account and claims its publisher id, in one transaction: of concurrent
 * registrations for one publisher id, exactly one wins.
 */
export async function createDeveloperAccount(db: Firestore, uid: string, data: Omit<DeveloperDocument, "createdAt">, now: Date): Promise<DeveloperAccount> {
  const developerRef = db.collection(COLLECTIONS.developers).doc(uid);
  const publisherRef = db.collection(COLLECTIONS.publishers).doc(data.publisherId);
  const developer: DeveloperDocument = { ...data, createdAt: Timestamp.fromDate(now) };
  await db.runTransaction(async (tx) => {
    const [existing, publisher] = await tx.getAll(developerRef, publisherRef);
    if (existing.exists) throw new ApiError("already_registered", "This account already has a developer account.");
    if (publisher.exists) throw new ApiError("publisher_taken", `Publisher id '${data.publisherId}' is taken.`);
    tx.create(publisherRef, { developerId: uid });
    tx.create(developerRef, developer);
  });
  return { id: uid, ...developer };
}

export async function registerWithPassword(
  { db, auth, identity, clock }: Deps,
  input: z.output<typeof registerWithPasswordSchema>,
) {
  if ((await db.collection(COLLECTIONS.publishers).doc(input.publisherId).get()).exists) {
    throw new ApiError("publisher_taken", `Publisher id '${input.publisherId}' is taken.`);
  }
  const user = await auth
    .createUser({ email: input.email, password: input.password, displayName: input.displayName })
    .catch((error: { code?: string; message?: string }) => {
      if (error.code === "auth/email-already-exists") throw new ApiError("email_exists", "An account with this email exists; sign in and register with its token.");
      if (error.code === "auth/invalid-email" || error.code === "auth/invalid-password") throw invalidRequest(error.message ?? "Invalid email or password.");
      throw error;
    });
  let developer: DeveloperAccount;
  try {
    developer = await createDeveloperAccount(db, user.uid, { email: input.email, displayName: input.displayName, publisherId: input.publisherId }, clock());
  } catch (error) {
    // Nothing half-made: without its developer account the new Auth user goes too.
    await auth.deleteUser(user.uid);
    throw error;
  }
  const session = await identity.signInWithPassword(input.email, input.password);
  return { developer: toDeveloperView(developer), idToken: session.idToken, refreshToken: session.refreshToken, expiresIn: session.expiresIn };
}

export async function registerExistingUser({ db, clock }: Deps, caller: Caller, input: z.output<typeof registerWithTokenSchema>) {
  const developer = await createDeveloperAccount(db, caller.uid, { email: caller.email, displayName: input.displayName, publisherId: input.publisherId }, clock());
  return { developer: toDeveloperView(developer) };
}

export async function login({ db, identity }: Deps, email: string, password: string) {
  const session = await identity.signInWithPassword(email, password);
  const developer = await findDeveloper(db, session.uid);
  if (!developer) throw new ApiError("not_a_developer", "This account has no developer account; register first.");
  return { developer: toDeveloperView(developer), idToken: session.idToken, refreshToken: session.refreshToken, expiresIn: session.expiresIn };
}
