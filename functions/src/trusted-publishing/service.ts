import type { z } from "zod";
import { assertInNamespace, assertOwnsModule } from "../access/policy";
import { auditLog, type Actor } from "../core/audit-log";
import { PUBLISH_TOKEN_PREFIX, type DeveloperAccount, type DeveloperCaller } from "../core/auth";
import { withinDeadline } from "../core/deadline";
import { toIso } from "../core/documents";
import { ApiError, invalidRequest, tokenError } from "../core/errors";
import { randomBase62, tokenHash } from "../core/secret-tokens";
import type { Deps } from "../deps";
import { tokenDeveloper } from "../developers/access-tokens";
import { developerStore } from "../developers/developer-store";
import { moduleStore, type ModuleRecord } from "../marketplace/module-store";
import { actingOwner } from "../publishing/publisher";
import { matchesRule, provenanceOf } from "./claims";
import type { OidcVerifier } from "./oidc";
import { publishTokenStore } from "./publish-token-store";
import type { addTrustedPublisherSchema, trustedPublisherSchema } from "./schemas";
import { trustedPublisherStore, type TrustedPublisherRecord } from "./trusted-publisher-store";

/**
 * Trusted publishing (contract §15): an owner names who may publish a module from CI; CI trades
 * its OIDC token for an `mpo_` token valid at most 15 minutes for exactly the matching modules.
 */

export const MAX_TRUSTED_PUBLISHERS_PER_MODULE = 20;
export const PUBLISH_TOKEN_LIFETIME_MS = 15 * 60 * 1000;
const PUBLISH_TOKEN = /^mpo_[0-9A-Za-z]{43}$/;

type TrustedPublisherView = z.output<typeof trustedPublisherSchema>;

const view = (record: TrustedPublisherRecord): TrustedPublisherView => ({
  id: record.id,
  issuer: record.issuer,
  subject: record.subject,
  claims: record.claims,
  createdAt: toIso(record.createdAt),
});

/**
 * The caller's module (or their business's, §26, while they are its owner or admin); or, before
 * its first sign, an id in such a namespace (so CI can publish a module's first version too).
 */
async function assertOwnsModuleId(db: Deps["db"], developer: DeveloperAccount, moduleId: string): Promise<void> {
  const [module, owner] = await Promise.all([moduleStore(db).getModule(moduleId), actingOwner(db, developer, moduleId)]);
  // A business's private module the caller does not act for does not exist for them (§26): the namespace answers, as for an id never signed.
  const hidden = module !== null && module.businessId !== null && module.developerId !== owner.id;
  if (module && !hidden) assertOwnsModule(moduleId, module, owner.id);
  else assertInNamespace(moduleId, owner.publisherId);
}

/**
 * Whether a trusted publisher still speaks for its module: whoever added it still owns it (a
 * business's module, §26: is still one of its owners or admins). Before the module's first sign,
 * its namespace decides.
 */
async function stillOwned(db: Deps["db"], rule: TrustedPublisherRecord, module: ModuleRecord | null): Promise<boolean> {
  if (module && !module.businessId) return module.developerId === rule.developerId;
  if (!module) {
    // The rule's author's own namespace was checked when it was added, and stays theirs.
    const claim = await developerStore(db).claim(rule.moduleId.split(".")[0]);
    if (!claim || !("businessId" in claim)) return true;
  }
  const owner = await actingOwner(db, { id: rule.developerId, publisherId: "" }, rule.moduleId);
  return module ? owner.id === module.developerId : owner.businessId !== undefined;
}

export async function addTrustedPublisher(
  { db, clock, config }: Deps,
  developer: DeveloperAccount,
  actor: Actor,
  moduleId: string,
  input: z.output<typeof addTrustedPublisherSchema>,
): Promise<TrustedPublisherView> {
  if (!config.trustedPublishing.issuers.includes(input.issuer)) {
    throw invalidRequest(`'${input.issuer}' is not a trusted issuer here; trusted: ${config.trustedPublishing.issuers.join(", ") || "none"}.`, [
      { path: "issuer", message: "Must be one of TRUSTED_ISSUERS." },
    ]);
  }
  await assertOwnsModuleId(db, developer, moduleId);
  const store = trustedPublisherStore(db);
  if ((await store.count(moduleId)) >= MAX_TRUSTED_PUBLISHERS_PER_MODULE) {
    throw invalidRequest(`A module may have at most ${MAX_TRUSTED_PUBLISHERS_PER_MODULE} trusted publishers; remove one first.`);
  }
  const now = clock();
  const record: TrustedPublisherRecord = { id: `tp_${randomBase62(16)}`, moduleId, developerId: developer.id, issuer: input.issuer, subject: input.subject ?? null, claims: input.claims ?? {}, createdAt: now };
  const event = { action: "trusted-publisher.add", target: moduleId, details: { id: record.id, issuer: record.issuer, subject: record.subject, claims: record.claims }, answer: view(record) };
  await auditLog(db).commit(actor, event, now, (batch) => store.createIn(batch, record));
  return event.answer;
}

export async function listTrustedPublishers({ db }: Deps, developer: DeveloperAccount, moduleId: string) {
  await assertOwnsModuleId(db, developer, moduleId);
  return { items: (await trustedPublisherStore(db).list(moduleId)).map(view) };
}

export async function removeTrustedPublisher({ db, clock }: Deps, developer: DeveloperAccount, actor: Actor, moduleId: string, id: string): Promise<void> {
  await assertOwnsModuleId(db, developer, moduleId);
  const store = trustedPublisherStore(db);
  const record = await store.get(moduleId, id);
  if (!record) throw new ApiError("not_found", `Module '${moduleId}' has no trusted publisher '${id}'.`);
  const event = { action: "trusted-publisher.remove", target: moduleId, details: { id, issuer: record.issuer, subject: record.subject, claims: record.claims } };
  await auditLog(db).commit(actor, event, clock(), (batch) => store.deleteIn(batch, moduleId, id));
}

/**
 * Trades a CI's OIDC token for a publish token: for exactly the modules whose trusted publishers
 * the token matches, all of one publisher, valid 15 minutes. Every module gets an audit entry
 * naming the token and the CI run, in the batch that creates the token.
 */
export async function exchangeOidcToken({ db, auth, clock }: Deps, oidc: OidcVerifier, oidcToken: string) {
  const claims = await oidc.verify(oidcToken);
  const repository = typeof claims.repository === "string" ? claims.repository : null;
  const candidates = (await trustedPublisherStore(db).candidates(claims.iss, claims.sub, repository)).filter((rule) => matchesRule(rule, claims));
  const candidateIds = [...new Set(candidates.map((rule) => rule.moduleId))].sort();
  const modules = new Map((await moduleStore(db).getModules(candidateIds)).map((module, index) => [candidateIds[index], module]));
  // A trusted publisher speaks for its module only while whoever added it still owns it.
  const owned = await Promise.all(candidates.map((rule) => stillOwned(db, rule, modules.get(rule.moduleId) ?? null)));
  const granted = candidates.filter((_, index) => owned[index]);
  if (granted.length === 0) {
    throw new ApiError("no_trusted_publisher", `No module trusts this token's issuer, subject and claims (sub '${claims.sub}'${repository ? `, repository '${repository}'` : ""}).`);
  }
  const owners = new Set(granted.map((rule) => rule.developerId));
  if (owners.size > 1) {
    throw new ApiError("no_trusted_publisher", "This token matches trusted publishers of several publishers' modules; each must pin claims (e.g. workflow_ref or environment) that tell their CI jobs apart.");
  }
  const developer = await tokenDeveloper({ db, auth }, [...owners][0], () => new ApiError("no_trusted_publisher", "The publisher of the modules this token matches no longer has an account."));
  const now = clock();
  const token = `${PUBLISH_TOKEN_PREFIX}${randomBase62(43)}`;
  const record = {
    id: `otk_${randomBase62(16)}`,
    developerId: developer.id,
    moduleIds: [...new Set(granted.map((rule) => rule.moduleId))].sort(),
    trustedPublishers: granted.map((rule) => ({ moduleId: rule.moduleId, id: rule.id })),
    provenance: provenanceOf(claims),
    createdAt: now,
    expiresAt: new Date(now.getTime() + PUBLISH_TOKEN_LIFETIME_MS),
  };
  const actor: Actor = { kind: "token", id: record.id };
  const batch = db.batch();
  publishTokenStore(db).createIn(batch, tokenHash(token), record);
  for (const moduleId of record.moduleIds) {
    const trustedPublishers = granted.filter((rule) => rule.moduleId === moduleId).map((rule) => rule.id);
    auditLog(db).record(batch, actor, { action: "token.oidc-exchange", target: moduleId, details: { tokenId: record.id, trustedPublishers, provenance: record.provenance, expiresAt: toIso(record.expiresAt) } }, now);
  }
  await withinDeadline("Firestore (OIDC exchange)", batch.commit());
  return { token, expiresAt: toIso(record.expiresAt), moduleIds: record.moduleIds };
}

/**
 * The developer a publish token stands for, limited to the token's modules whose trusted
 * publisher still exists: removing a trusted publisher ends the tokens it granted at once.
 */
export async function authenticatePublishToken({ db, auth, clock }: Pick<Deps, "db" | "auth" | "clock">, bearer: string): Promise<DeveloperCaller> {
  const refused = (why: string) => tokenError("invalid_token", `This publish token is ${why}.`);
  if (!PUBLISH_TOKEN.test(bearer)) throw refused("malformed");
  const token = await publishTokenStore(db).findByHash(tokenHash(bearer));
  if (!token) throw refused("not valid (unknown)");
  if (token.expiresAt <= clock()) throw refused(`expired (since ${toIso(token.expiresAt)}); exchange a new OIDC token`);
  const [developer, remaining] = await Promise.all([
    tokenDeveloper({ db, auth }, token.developerId, refused),
    trustedPublisherStore(db).existing(token.trustedPublishers),
  ]);
  const moduleIds = token.moduleIds.filter((moduleId) => remaining.some((rule) => rule.moduleId === moduleId));
  if (moduleIds.length === 0) throw refused("no longer trusted by any of its modules (their trusted publishers were removed)");
  return {
    uid: developer.id,
    email: developer.email,
    name: developer.displayName,
    developer,
    publishToken: { id: token.id, moduleIds, provenance: token.provenance },
  };
}
