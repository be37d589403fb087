import { initializeApp } from "@firebase/app";
import {
  browserLocalPersistence,
  connectAuthEmulator,
  createUserWithEmailAndPassword,
  initializeAuth,
  sendEmailVerification,
  sendPasswordResetEmail,
  onAuthStateChanged,
  signInWithEmailAndPassword,
  signOut,
  type Auth,
  type User,
} from "@firebase/auth";

/**
 * Firebase Auth for the publisher portal. The web app's configuration comes from this site's
 * `/__/firebase/init.json` (Firebase Hosting serves it for the project's web app; `npm start`
 * serves one for the Auth emulator, with `emulator: true`). On the emulator the SDK is pointed
 * at this same origin, which forwards to the emulator, so no request leaves the site.
 * Only email and password sign-in is used: no popup or redirect resolver, so no third-party
 * script or frame is ever loaded.
 */
interface SiteConfig {
  apiKey: string;
  authDomain?: string;
  projectId: string;
  appId?: string;
  emulator?: boolean;
}

let authPromise: Promise<Auth> | undefined;

export function firebaseAuth(): Promise<Auth> {
  authPromise ??= (async () => {
    const response = await fetch("/__/firebase/init.json");
    if (!response.ok) throw new Error("This site has no Firebase web app configured (/__/firebase/init.json).");
    const config = (await response.json()) as SiteConfig;
    const app = initializeApp({ apiKey: config.apiKey, authDomain: config.authDomain, projectId: config.projectId, appId: config.appId });
    const auth = initializeAuth(app, { persistence: browserLocalPersistence });
    if (config.emulator) connectAuthEmulator(auth, location.origin, { disableWarnings: true });
    return auth;
  })();
  return authPromise;
}

export async function watchUser(onChange: (user: User | null) => void): Promise<() => void> {
  return onAuthStateChanged(await firebaseAuth(), onChange);
}

const SIGN_IN_ERRORS: Record<string, string> = {
  "auth/invalid-credential": "The email or password is wrong.",
  "auth/wrong-password": "The email or password is wrong.",
  "auth/user-not-found": "The email or password is wrong.",
  "auth/invalid-email": "That is not an email address.",
  "auth/user-disabled": "This account is disabled.",
  "auth/too-many-requests": "Too many attempts: wait a moment and try again.",
  "auth/network-request-failed": "The sign-in service could not be reached.",
  "auth/email-already-in-use": "An account with this email exists: sign in instead.",
  "auth/weak-password": "Choose a password of at least 6 characters.",
};

export async function signIn(email: string, password: string): Promise<void> {
  try {
    await signInWithEmailAndPassword(await firebaseAuth(), email, password);
  } catch (error) {
    const code = (error as { code?: string }).code ?? "";
    throw new Error(SIGN_IN_ERRORS[code] ?? `Sign-in failed (${code || (error as Error).message}).`);
  }
}

export async function signOutUser(): Promise<void> {
  await signOut(await firebaseAuth());
}

/** A new account (any user: teams are not only for developers), with a verification email sent to it. */
export async function createAccount(email: string, password: string): Promise<void> {
  try {
    const { user } = await createUserWithEmailAndPassword(await firebaseAuth(), email, password);
    await sendEmailVerification(user);
  } catch (error) {
    const code = (error as { code?: string }).code ?? "";
    throw new Error(SIGN_IN_ERRORS[code] ?? `Could not create the account (${code || (error as Error).message}).`);
  }
}

/**
 * Firebase's password reset email for an address (the Auth emulator records it locally). Whether
 * an account has that address is not told: the same answer either way.
 */
export async function sendPasswordReset(email: string): Promise<void> {
  try {
    await sendPasswordResetEmail(await firebaseAuth(), email);
  } catch (error) {
    const code = (error as { code?: string }).code ?? "";
    if (code === "auth/user-not-found") return;
    throw new Error(SIGN_IN_ERRORS[code] ?? `Could not send the reset email (${code || (error as Error).message}).`);
  }
}

/** Sends the signed-in user another verification email. */
export async function resendVerification(user: User): Promise<void> {
  await sendEmailVerification(user);
}

/** The user's current state (email verified or not) from Firebase Auth, with a fresh ID token. */
export async function refreshUser(user: User): Promise<void> {
  await user.reload();
  await user.getIdToken(true);
}
