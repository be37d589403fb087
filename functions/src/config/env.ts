/** Reading settings from the environment: the shared parsers of every feature's reader. */

export type Env = Record<string, string | undefined>;

/** Whether this runs against emulators (the local stack, the tests, the Functions emulator). */
export function isEmulated(env: Env): boolean {
  return env.FUNCTIONS_EMULATOR === "true" || Boolean(env.FIRESTORE_EMULATOR_HOST);
}

export function positiveInt(env: Env, name: string, fallback: number): number {
  const value = nonNegativeInt(env, name, fallback);
  if (value === 0) throw new Error(`${name} must be a positive integer, got 0.`);
  return value;
}

export function nonNegativeInt(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new Error(`${name} must be a whole number, got '${raw}'.`);
  }
  return value;
}

export function booleanSetting(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === "") return fallback;
  if (raw === "true" || raw === "false") return raw === "true";
  throw new Error(`${name} must be true or false, got '${env[name]}'.`);
}

export function firebaseConfig(env: Env): { projectId?: string; storageBucket?: string } {
  try {
    return env.FIREBASE_CONFIG ? JSON.parse(env.FIREBASE_CONFIG) : {};
  } catch {
    return {};
  }
}

export const projectIdFromFirebaseConfig = (env: Env) => firebaseConfig(env).projectId;

export const bucketFromFirebaseConfig = (env: Env) => firebaseConfig(env).storageBucket;
