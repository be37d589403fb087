import type { z } from "zod";
import type { Caller, DeveloperAccount, DeveloperCaller } from "../core/auth";
import { toIso } from "../core/documents";
import { ApiError, invalidRequest, rateLimited } from "../core/errors";
import type { Deps } from "../deps";
import { developerStore } from "./developer-store";
import { loginAttemptStore } from "./login-attempt-store";
import { loginWindow, retryAfterSeconds } from "./login-limit";
import type { developerSchema, registerWithPasswordSchema, registerWithTokenSchema } from "./schemas";
import { withinDeadline } from "../core/deadline";

type DeveloperView = z.output<typeof developerSchema>;

export const toDeveloperView = (developer: DeveloperAccount): DeveloperView => ({
  id: developer.id,
  email: developer.email,
  displayName: developer.displayName,
  publisherId: developer.publisherId,
  createdAt: toIso(developer.createdAt),
});

const notADeveloper = () => new ApiError("not_a_developer", "This account has no developer account; register first.");

/** The "developer" auth mode: the caller must have a developer account. */
export async function requireDeveloper(db: Deps["db"], caller: Caller): Promise<DeveloperCaller> {
  const developer = await developerStore(db).get(caller.uid);
  if (!developer) throw notADeveloper();
  return { ...caller, developer };
}

/**
 * Creates the developer account and claims its publisher id, in one transaction: of concurrent
 * registrations for one publisher id, exactly one wins.
 */
export async function createDeveloperAccount(db: Deps["db"], account: Omit<DeveloperAccount, "createdAt">, now: Date): Promise<DeveloperAccount> {
  const developers = developerStore(db);
  const developer: DeveloperAccount = { ...account, createdAt: now };
  await withinDeadline("Firestore (register)", db.runTransaction(async (tx) => {
    const { registered, publisherTaken } = await developers.claims(tx, account.id, account.publisherId);
    if (registered) throw new ApiError("already_registered", "This account already has a developer account.");
    if (publisherTaken) throw new ApiError("publisher_taken", `Publisher id '${account.publisherId}' is taken.`);
    developers.create(tx, developer);
  }));
  return developer;
}

export async function registerWithPassword({ db, auth, identity, clock }: Deps, input: z.output<typeof registerWithPasswordSchema>) {
  // Checked before the Auth user is made, so a taken publisher id leaves no user behind.
  if (await developerStore(db).publisherTaken(input.publisherId)) {
    throw new ApiError("publisher_taken", `Publisher id '${input.publisherId}' is taken.`);
  }
  const user = await withinDeadline("Auth", auth.createUser({ email: input.email, password: input.password, displayName: input.displayName }))
    .catch((error: { code?: string; message?: string }) => {
      if (error.code === "auth/email-already-exists") throw new ApiError("email_exists", "An account with this email exists; sign in and register with its token.");
      if (error.code === "auth/invalid-email" || error.code === "auth/invalid-password") throw invalidRequest(error.message ?? "Invalid email or password.");
      throw error;
    });
  let developer: DeveloperAccount;
  try {
    developer = await createDeveloperAccount(db, { id: user.uid, email: input.email, displayName: input.displayName, publisherId: input.publisherId }, clock());
  } catch (error) {
    // Nothing half-made: without its developer account the new Auth user goes too.
    await withinDeadline("Auth", auth.deleteUser(user.uid));
    throw error;
  }
  const session = await identity.signInWithPassword(input.email, input.password);
  return { developer: toDeveloperView(developer), idToken: session.idToken, refreshToken: session.refreshToken, expiresIn: session.expiresIn };
}

export async function registerExistingUser({ db, clock }: Deps, caller: Caller, input: z.output<typeof registerWithTokenSchema>) {
  const developer = await createDeveloperAccount(db, { id: caller.uid, email: caller.email, displayName: input.displayName, publisherId: input.publisherId }, clock());
  return { developer: toDeveloperView(developer) };
}

/**
 * Password sign-in of a developer. An account with too many failed attempts in the current window
 * is refused with 429 before its password is tried, whichever address the attempts come from.
 */
export async function login({ db, identity, config, clock }: Deps, email: string, password: string) {
  const now = clock();
  const window = loginWindow(email, config.loginLimit, now);
  const attempts = loginAttemptStore(db);
  const wait = retryAfterSeconds(await attempts.failures(window.key), window, config.loginLimit, now);
  if (wait !== null) throw rateLimited(wait, "Too many failed sign-ins for this account; retry later.");
  const session = await identity.signInWithPassword(email, password).catch(async (error: unknown) => {
    if (error instanceof ApiError && error.code === "invalid_credentials") await attempts.recordFailure(window.key, window.endsAt);
    throw error;
  });
  await attempts.clear(window.key);
  const developer = await developerStore(db).get(session.uid);
  if (!developer) throw notADeveloper();
  return { developer: toDeveloperView(developer), idToken: session.idToken, refreshToken: session.refreshToken, expiresIn: session.expiresIn };
}
