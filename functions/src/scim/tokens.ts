import { requireOwner, readBusiness, type MemberCaller } from "../businesses/membership";
import { auditLog, type Actor } from "../core/audit-log";
import { withinDeadline } from "../core/deadline";
import { toIso } from "../core/documents";
import { ApiError } from "../core/errors";
import { randomBase62, tokenHash } from "../core/secret-tokens";
import type { Deps } from "../deps";
import { ScimError } from "./resources";
import { scimTokenStore, type ScimTokenRecord } from "./token-store";

/**
 * SCIM tokens (§22): an owner makes one per identity provider connection; it is shown once, kept
 * as a hash, and works on `/scim/v2` only, for its business only.
 */

export const SCIM_TOKEN_PREFIX = "scim_";
/** How many SCIM tokens one business may have. */
export const MAX_SCIM_TOKENS = 20;
/** A token's last use is written at most this often, so a busy sync is not a write per request. */
const TOUCH_EVERY_MS = 60_000;
/** When this instance last recorded each token's use (by hash; entries older than a minute are dropped past 10,000). */
const touchedAt = new Map<string, number>();

export const scimBaseUrl = (deps: Pick<Deps, "config">) => `${deps.config.publicBaseUrl}/scim/v2`;

const tokenView = (token: ScimTokenRecord) => ({ id: token.id, name: token.name, createdAt: toIso(token.createdAt), lastUsedAt: token.lastUsedAt ? toIso(token.lastUsedAt) : null });

/** POST /businesses/:id/scim/tokens (owners). */
export async function createScimToken(deps: Deps, caller: MemberCaller, actor: Actor, businessId: string, name: string) {
  const { db, clock } = deps;
  const tokens = scimTokenStore(db);
  const token = `${SCIM_TOKEN_PREFIX}${randomBase62(43)}`;
  const record = { id: `st_${randomBase62(16)}`, businessId, name, createdAt: clock() };
  const created = { id: record.id, name, token, baseUrl: scimBaseUrl(deps), createdAt: toIso(record.createdAt) };
  await withinDeadline(
    "Firestore",
    db.runTransaction(async (tx) => {
      requireOwner(await readBusiness(deps, tx, businessId, caller.uid), caller, businessId, "make SCIM tokens");
      if ((await tokens.list(businessId, tx)).length >= MAX_SCIM_TOKENS) {
        throw new ApiError("too_many_scim_tokens", `A business may have ${MAX_SCIM_TOKENS} SCIM tokens; revoke one first.`);
      }
      tokens.create(tx, tokenHash(token), record);
      auditLog(db).record(tx, actor, { action: "scim.token.create", target: businessId, details: { tokenId: record.id, name }, answer: created }, record.createdAt);
    }),
  );
  return created;
}

/** GET /businesses/:id/scim/tokens (owners): never the tokens themselves. */
export async function listScimTokens(deps: Deps, caller: MemberCaller, businessId: string) {
  requireOwner(await readBusiness(deps, null, businessId, caller.uid), caller, businessId, "see its SCIM tokens");
  return { items: (await scimTokenStore(deps.db).list(businessId)).map(tokenView), baseUrl: scimBaseUrl(deps) };
}

/** DELETE /businesses/:id/scim/tokens/:tokenId (owners): the token stops working at once. */
export async function revokeScimToken(deps: Deps, caller: MemberCaller, actor: Actor, businessId: string, tokenId: string): Promise<void> {
  const { db, clock } = deps;
  const tokens = scimTokenStore(db);
  await withinDeadline(
    "Firestore",
    db.runTransaction(async (tx) => {
      requireOwner(await readBusiness(deps, tx, businessId, caller.uid), caller, businessId, "revoke SCIM tokens");
      const token = (await tokens.list(businessId, tx)).find((candidate) => candidate.id === tokenId);
      if (!token) throw new ApiError("scim_token_not_found", `This business has no SCIM token '${tokenId}'.`);
      tokens.delete(tx, token.hash);
      auditLog(db).record(tx, actor, { action: "scim.token.revoke", target: businessId, details: { tokenId, name: token.name } }, clock());
    }),
  );
}

/** Who calls SCIM: a business, through one of its tokens. */
export interface ScimCaller {
  businessId: string;
  tokenId: string;
  actor: Actor;
}

const unauthorized = (detail: string) => new ScimError(401, null, detail);

/** The business of a request's `Authorization: Bearer scim_…`; 401 in SCIM's form for anything else. */
export async function authenticateScim(deps: Deps, header: string | undefined, requestId: string): Promise<ScimCaller> {
  const match = header && /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) throw unauthorized("This endpoint needs 'Authorization: Bearer scim_…', a SCIM token of the business.");
  if (!match[1].startsWith(SCIM_TOKEN_PREFIX)) throw unauthorized("Only a SCIM token (scim_…) is accepted here.");
  const hash = tokenHash(match[1]);
  const tokens = scimTokenStore(deps.db);
  const token = await tokens.findByHash(hash);
  if (!token) throw unauthorized("The SCIM token is not valid, or has been revoked.");
  const now = deps.clock();
  // Once a minute at most, and once per instance however many requests arrive together (10 clients
  // starting a sync all read a token not yet marked used): never a hot document (§25).
  const lastTouch = Math.max(token.lastUsedAt?.getTime() ?? 0, touchedAt.get(hash) ?? 0);
  if (now.getTime() - lastTouch > TOUCH_EVERY_MS) {
    if (touchedAt.size >= 10_000) for (const [key, at] of touchedAt) if (now.getTime() - at > TOUCH_EVERY_MS) touchedAt.delete(key);
    touchedAt.set(hash, now.getTime());
    await tokens.touch(hash, now).catch((error: Error) => deps.logger.warn("could not record a SCIM token's use", { tokenId: token.id, error: error.message }));
  }
  return { businessId: token.businessId, tokenId: token.id, actor: { kind: "scim", id: token.id, requestId } };
}
