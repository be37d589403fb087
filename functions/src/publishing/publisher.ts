import type { Firestore } from "firebase-admin/firestore";
import { credentialOf, type PublisherCredential } from "../access/policy";
import { actsForBusinessPublisher } from "../access/rules";
import { memberStore } from "../accounts/member-store";
import type { Actor } from "../core/audit-log";
import type { DeveloperAccount, DeveloperCaller } from "../core/auth";
import { ApiError } from "../core/errors";
import type { Provenance } from "../core/provenance";
import { developerStore } from "../developers/developer-store";
import { moduleStore, type ModuleRecord } from "../marketplace/module-store";

/** Who signs and publishes: a developer account, as far as modules need to know it, who acts for it, and how. */
export interface Publisher {
  /** Whose modules: the developer account's id, or `business:<id>` acting for a business (§26). */
  id: string;
  publisherId: string;
  /** Acting for a business under its own publisher id (§26): its modules are private to it. */
  businessId?: string;
  actor: Actor;
  credential: PublisherCredential;
  /** The CI run behind an OIDC publish token: the provenance of what it signs. */
  provenance: Provenance | null;
}

/** A developer acting with their own account's rights, as an ID token gives them (the seed, the bench). */
export const accountPublisher = (developer: DeveloperAccount, actor: Actor): Publisher => ({
  id: developer.id,
  publisherId: developer.publisherId,
  actor,
  credential: { kind: "id-token" },
  provenance: null,
});

/** The caller of a /developers/modules* route: their account, and the credential they came with. */
export const publisherOf = (caller: DeveloperCaller, actor: Actor): Publisher => ({
  ...accountPublisher(caller.developer, actor),
  credential: credentialOf(caller),
  provenance: caller.publishToken?.provenance ?? null,
});

/** Who owns a business's private modules (§26): the business, whichever of its owners and admins acts. */
export const businessOwnerId = (businessId: string) => `business:${businessId}`;

/** Whose a developer's change of a module is: their own account's, or a business's they act for. */
export interface ActingOwner {
  /** The developer's id, or `business:<id>` (businessOwnerId). */
  id: string;
  publisherId: string;
  businessId?: string;
}

/**
 * Whom a developer acts for with a module id: themselves; or, for an id in a business's own
 * namespace (§26), that business, while they are one of its owners or admins (else themselves,
 * whom the namespace and ownership rules then refuse).
 */
export async function actingOwner(db: Firestore, developer: { id: string; publisherId: string }, moduleId: string): Promise<ActingOwner> {
  const own = { id: developer.id, publisherId: developer.publisherId };
  const namespace = moduleId.split(".")[0];
  if (namespace === developer.publisherId) return own;
  const claim = await developerStore(db).claim(namespace);
  if (!claim || !("businessId" in claim)) return own;
  const member = await memberStore(db).get(null, claim.businessId, developer.id);
  if (!actsForBusinessPublisher(member)) return own;
  return { id: businessOwnerId(claim.businessId), publisherId: namespace, businessId: claim.businessId };
}

/** Whom a developer's module list covers: their own account, and each business they are an owner or admin of (§26). */
export async function ownersActedFor(db: Firestore, developerId: string): Promise<string[]> {
  const memberships = await memberStore(db).ofUser(developerId);
  return [developerId, ...memberships.filter(({ member }) => actsForBusinessPublisher(member)).map(({ businessId }) => businessOwnerId(businessId))];
}

/** The modules a publisher's list covers (ownersActedFor's); a publish token, only those it may act on. */
export async function modulesActedOn(db: Firestore, publisher: Publisher): Promise<ModuleRecord[]> {
  const owners = await ownersActedFor(db, publisher.id);
  const { credential } = publisher;
  return (await Promise.all(owners.map((owner) => moduleStore(db).byDeveloper(owner)))).flat().filter((module) => credential.kind !== "oidc" || credential.moduleIds.includes(module.id));
}

/**
 * The publisher a developer acts as for a module id (actingOwner), with how they came. Signing and
 * publishing (`refuseSuspended`) are refused while a moderation decision suspends that publisher (§30).
 */
export async function actingPublisher(db: Firestore, publisher: Publisher, moduleId: string, { refuseSuspended = false } = {}): Promise<Publisher> {
  const owner = publisher.businessId ? publisher : await actingOwner(db, publisher, moduleId);
  const acting = owner.businessId ? { ...publisher, ...owner } : publisher;
  if (refuseSuspended && (await developerStore(db).claim(acting.publisherId))?.suspension) {
    throw new ApiError("publisher_suspended", `The publisher '${acting.publisherId}' is suspended by a moderation decision: it cannot sign or publish. GET /developers/decisions says why, and how to appeal.`);
  }
  return acting;
}
