import type { z } from "zod";
import { auditLog, type Actor } from "../core/audit-log";
import { ACCESS_TOKEN_PREFIX, type DeveloperAccount, type DeveloperCaller } from "../core/auth";
import { withinDeadline } from "../core/deadline";
import { toIso } from "../core/documents";
import { ApiError, invalidRequest, tokenError } from "../core/errors";
import { randomBase62, tokenHash } from "../core/secret-tokens";
import { DAY_MS } from "../core/time";
import type { Deps } from "../deps";
import { accessTokenStore, type AccessTokenRecord } from "./access-token-store";
import { developerStore } from "./developer-store";
import type { accessTokenSchema, createAccessTokenSchema } from "./schemas";

/**
 * Publisher access tokens (contract §12): `mpt_` + 43 random base62 characters (256 bits), shown
 * once; only their SHA-256 is stored. They stand in for an ID token on `/developers/modules*`.
 */
const ACCESS_TOKEN = /^mpt_[0-9A-Za-z]{40,100}$/;
/** How many live tokens one developer may hold. */
export const MAX_TOKENS_PER_DEVELOPER = 50;
/** `lastUsedAt` moves at most this often, so a busy CI job does not write on every call. */
const LAST_USED_RESOLUTION_MS = 60_000;

/** Firestore's error code for an update of a document that does not exist. */
const NOT_FOUND = 5;

type TokenView = z.output<typeof accessTokenSchema>;

const view = (token: AccessTokenRecord): TokenView => ({
  id: token.id,
  name: token.name,
  createdAt: toIso(token.createdAt),
  expiresAt: toIso(token.expiresAt),
  lastUsedAt: token.lastUsedAt ? toIso(token.lastUsedAt) : null,
});

export async function createAccessToken({ db, clock }: Deps, developer: DeveloperAccount, actor: Actor, input: z.output<typeof createAccessTokenSchema>) {
  const tokens = accessTokenStore(db);
  if ((await tokens.count(developer.id)) >= MAX_TOKENS_PER_DEVELOPER) {
    throw invalidRequest(`A developer may hold at most ${MAX_TOKENS_PER_DEVELOPER} access tokens; revoke one first.`);
  }
  const now = clock();
  const token = `${ACCESS_TOKEN_PREFIX}${randomBase62(43)}`;
  const record = { id: `tok_${randomBase62(16)}`, developerId: developer.id, name: input.name, createdAt: now, expiresAt: new Date(now.getTime() + input.expiresInDays * DAY_MS) };
  const { lastUsedAt: _never, ...shown } = view({ ...record, lastUsedAt: null });
  const created = { ...shown, token };
  const event = { action: "token.create", target: developer.id, details: { tokenId: record.id, name: record.name, expiresAt: toIso(record.expiresAt) }, answer: created };
  await auditLog(db).commit(actor, event, now, (batch) => tokens.createIn(batch, tokenHash(token), record));
  return created;
}

export async function listAccessTokens({ db }: Deps, developer: DeveloperAccount) {
  return { items: (await accessTokenStore(db).list(developer.id)).map(view) };
}

export async function revokeAccessToken({ db, clock }: Deps, developer: DeveloperAccount, actor: Actor, id: string): Promise<void> {
  const ref = await accessTokenStore(db).refById(developer.id, id);
  if (!ref) throw new ApiError("token_not_found", `No access token '${id}' of yours.`);
  await auditLog(db).commit(actor, { action: "token.revoke", target: developer.id, details: { tokenId: id } }, clock(), (batch) => batch.delete(ref));
}

/**
 * The developer account behind a publisher token (access or OIDC publish token): refused as the
 * token's problem when the account or its user is gone, `user_disabled` when the user is disabled.
 */
export async function tokenDeveloper({ db, auth }: Pick<Deps, "db" | "auth">, developerId: string, refused: (why: string) => Error): Promise<DeveloperAccount> {
  const [developer, user] = await Promise.all([
    developerStore(db).get(developerId),
    withinDeadline("Auth", auth.getUser(developerId)).catch(() => null),
  ]);
  if (!developer || !user) throw refused("for an account that no longer exists");
  if (user.disabled) throw tokenError("user_disabled", "The account behind this token is disabled.");
  return developer;
}

/**
 * The developer an access token stands for: refused (401 invalid_token) when it is malformed,
 * unknown (never issued, or revoked), expired, or its developer account or user is gone or
 * disabled.
 */
export async function authenticateAccessToken({ db, auth, clock }: Pick<Deps, "db" | "auth" | "clock">, bearer: string): Promise<DeveloperCaller> {
  const refused = (why: string) => tokenError("invalid_token", `This access token is ${why}.`);
  if (!ACCESS_TOKEN.test(bearer)) throw refused("malformed");
  const hash = tokenHash(bearer);
  const tokens = accessTokenStore(db);
  const token = await tokens.findByHash(hash);
  const now = clock();
  if (!token) throw refused("not valid (unknown or revoked)");
  if (token.expiresAt <= now) throw refused(`expired (since ${toIso(token.expiresAt)}); create a new one`);
  const developer = await tokenDeveloper({ db, auth }, token.developerId, refused);
  if (!token.lastUsedAt || now.getTime() - token.lastUsedAt.getTime() >= LAST_USED_RESOLUTION_MS) {
    // Revoked between the read and this write: refused like any revoked token.
    await tokens.touch(hash, now).catch((error: { code?: number }) => {
      throw error.code === NOT_FOUND ? refused("not valid (unknown or revoked)") : error;
    });
  }
  return { uid: developer.id, email: developer.email, name: developer.displayName, developer, accessTokenId: token.id };
}
