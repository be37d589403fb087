import { credentialOf, type PublisherCredential } from "../access/policy";
import type { Actor } from "../core/audit-log";
import type { DeveloperAccount, DeveloperCaller } from "../core/auth";
import type { Provenance } from "../core/provenance";

/** Who signs and publishes: a developer account, as far as modules need to know it, who acts for it, and how. */
export interface Publisher {
  id: string;
  publisherId: string;
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
