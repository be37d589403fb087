import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createMarketplaceClient, type MarketplaceClient } from "@marketplace/client";
import { unwrap, UsageError } from "./problems";

export const DEFAULT_API = "http://127.0.0.1:5001/api/v1";

export type Env = Record<string, string | undefined>;

interface SavedLogin {
  api: string;
  email: string;
  refreshToken: string;
}

/** Where `mpkg login` keeps its refresh token: $MPKG_CONFIG_DIR, else the user's config folder. */
export function configDir(env: Env): string {
  if (env.MPKG_CONFIG_DIR) return env.MPKG_CONFIG_DIR;
  if (process.platform === "win32" && env.APPDATA) return path.join(env.APPDATA, "mpkg");
  return path.join(env.XDG_CONFIG_HOME || path.join(os.homedir(), ".config"), "mpkg");
}

const credentialsFile = (env: Env) => path.join(configDir(env), "credentials.json");

export async function saveLogin(env: Env, login: SavedLogin): Promise<string> {
  const file = credentialsFile(env);
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  await writeFile(file, `${JSON.stringify(login, null, 2)}\n`, { mode: 0o600 });
  return file;
}

export async function forgetLogin(env: Env): Promise<boolean> {
  const file = credentialsFile(env);
  const existed = Boolean(await readFile(file).catch(() => null));
  await rm(file, { force: true });
  return existed;
}

async function savedLogin(env: Env): Promise<SavedLogin | null> {
  const text = await readFile(credentialsFile(env), "utf8").catch(() => null);
  return text ? (JSON.parse(text) as SavedLogin) : null;
}

/** A client without credentials (login, verify's key download). */
export const anonymousClient = (api: string) => createMarketplaceClient({ baseUrl: api });

/**
 * A client that authenticates as the publisher: with `MPKG_TOKEN` (an access token, for CI) when
 * it is set and `accessToken` is allowed, else with the saved login, whose refresh token is
 * exchanged for an ID token once per run (and the new refresh token saved).
 */
export async function publisherClient(api: string, env: Env, { accessToken }: { accessToken: boolean }): Promise<{ client: MarketplaceClient; bearer: string }> {
  let bearer: string;
  if (accessToken && env.MPKG_TOKEN) {
    bearer = env.MPKG_TOKEN;
  } else {
    const login = await savedLogin(env);
    if (!login) {
      throw new UsageError(
        accessToken ? "Not signed in: run `mpkg login`, or set MPKG_TOKEN to an access token." : "This command needs a login (access tokens cannot manage tokens): run `mpkg login`.",
      );
    }
    // A refresh token goes back only to the API that issued it.
    if (login.api !== api) throw new UsageError(`The saved login (${login.email}) is for ${login.api}, not ${api}: run \`mpkg login\` against this API.`);
    const refreshed = unwrap(await anonymousClient(api).POST("/developers/auth/refresh", { body: { refreshToken: login.refreshToken } }));
    await saveLogin(env, { ...login, refreshToken: refreshed.refreshToken });
    bearer = refreshed.idToken;
  }
  return { client: createMarketplaceClient({ baseUrl: api, token: () => bearer }), bearer };
}
