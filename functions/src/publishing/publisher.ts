import type { Firestore } from "firebase-admin/firestore";
import { credentialOf, type PublisherCredential } from "../access/policy";
import { memberStore } from "../accounts/member-store";
import type { Actor } from "../core/audit-log";
import type { DeveloperAccount, DeveloperCaller } from "../core/auth";
import type { Provenance } from "../core/provenance";
import { developerStore } from "../developers/developer-store";

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

/**
 * The publisher a developer acts as for a module id: their own; or, for an id in a business's own
 * namespace (§26), that business, when they are one of its owners or admins (else their own, which
 * the namespace and ownership rules then refuse).
 */
export async function actingPublisher(db: Firestore, publisher: Publisher, moduleId: string): Promise<Publisher> {
  const namespace = moduleId.split(".")[0];
  if (namespace === publisher.publisherId || publisher.businessId) return publisher;
  const claim = await developerStore(db).claim(namespace);
  if (!claim || !("businessId" in claim)) return publisher;
  const member = await memberStore(db).get(null, claim.businessId, publisher.id);
  if (!member || member.suspended || member.role === "member") return publisher;
  return { ...publisher, id: businessOwnerId(claim.businessId), publisherId: namespace, businessId: claim.businessId };
}
