import { createHash } from "node:crypto";
import type { Auth, DecodedIdToken } from "firebase-admin/auth";
import type { Request } from "express";
import type { Actor } from "./audit-log";
import type { Provenance } from "./provenance";
import { tokenError, unauthenticated } from "./errors";
import { withinDeadline } from "./deadline";
import { memo } from "./memo";

/** A developer account (`developers/{uid}`), as the routes that need one see their caller. */
export interface DeveloperAccount {
  id: string;
  email: string | null;
  displayName: string;
  publisherId: string;
  createdAt: Date;
}

/** Who is calling: from a verified Firebase ID token, or (on `/developers/modules*`) a publisher access token. */
export interface Caller {
  uid: string;
  email: string | null;
  name: string | null;
  /** The caller's developer account, on routes that require one. */
  developer?: DeveloperAccount;
  /** The id of the publisher access token the caller came with, instead of an ID token. */
  accessTokenId?: string;
  /** The OIDC publish token the caller came with (trusted publishing, §15): its id, modules and CI run. */
  publishToken?: PublishTokenGrant;
  /** How an ID token's user signed in (`firebase.sign_in_provider`: password, saml.…, oidc.…), for §22's SSO. */
  signInProvider?: string | null;
  /** Whether the ID token says the email is verified. */
  emailVerified?: boolean;
}

export interface PublishTokenGrant {
  id: string;
  /** The only modules the token may act on. */
  moduleIds: string[];
  provenance: Provenance;
}

/** Who a caller is in the audit log: the token when they came with one, else their account. */
export const actorOf = (caller: Caller, requestId: string, asDeveloper: boolean): Actor => {
  const tokenId = caller.publishToken?.id ?? caller.accessTokenId;
  if (tokenId) return { kind: "token", id: tokenId, requestId };
  return { kind: asDeveloper ? "developer" : "user", id: caller.uid, requestId };
};

/** Publisher access tokens start so (developers/access-tokens.ts); an ID token (a JWT) never does. */
export const ACCESS_TOKEN_PREFIX = "mpt_";
/** OIDC publish tokens of trusted publishing start so (trusted-publishing/publish-tokens.ts). */
export const PUBLISH_TOKEN_PREFIX = "mpo_";
/** Either kind of publisher token: what stands in for an ID token on `/developers/modules*`. */
export const isPublisherToken = (bearer: string) => bearer.startsWith(ACCESS_TOKEN_PREFIX) || bearer.startsWith(PUBLISH_TOKEN_PREFIX);

export type DeveloperCaller = Caller & { developer: DeveloperAccount };

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * Verifies Firebase ID tokens, with two strengths:
 * - `write`: the Admin SDK's full check (`checkRevoked`): an Auth lookup every time, so a revoked
 *   token or a disabled account is refused at once. Every non-GET route uses it.
 * - `read`: the token's signature (verified once, then remembered with the token for at most
 *   `revocationCheckMs`), its expiry (every time), and the account's disabled flag and
 *   `tokensValidAfterTime` from a per-user cache of at most `revocationCheckMs`, so a signed-out
 *   or disabled account is refused within that bound and a busy reader costs no Auth work per
 *   request.
 */
export interface TokenVerifier {
  verify(idToken: string, strength: "read" | "write"): Promise<DecodedIdToken>;
}

interface AccountState {
  disabled: boolean;
  /** Tokens issued (auth_time) before this, in ms since the epoch, are revoked. */
  validSinceMs: number;
}

export function tokenVerifier(auth: Auth, revocationCheckMs: number): TokenVerifier {
  const accounts = memo<AccountState>({ ttlMs: revocationCheckMs, maxEntries: 10_000 });
  const verified = memo<DecodedIdToken>({ ttlMs: revocationCheckMs, maxEntries: 10_000 });
  const accountState = (uid: string) =>
    accounts.get(uid, async () => {
      const user = await withinDeadline("Auth", auth.getUser(uid));
      return { disabled: user.disabled, validSinceMs: user.tokensValidAfterTime ? Date.parse(user.tokensValidAfterTime) : 0 };
    });
  return {
    async verify(idToken, strength) {
      try {
        if (strength === "write") return await withinDeadline("Auth", auth.verifyIdToken(idToken, true));
        const key = createHash("sha256").update(idToken).digest("base64url");
        const token = await verified.get(key, () => withinDeadline("Auth", auth.verifyIdToken(idToken, false)));
        if (token.exp * 1000 <= Date.now()) throw tokenError("invalid_token", "The ID token has expired; refresh it.");
        const state = await accountState(token.uid);
        if (state.disabled) throw tokenError("user_disabled", "The account of this ID token is disabled.");
        if (token.auth_time * 1000 < state.validSinceMs) throw tokenError("token_revoked", "The ID token has been revoked; sign in again.");
        return token;
      } catch (error) {
        throw tokenProblem(error);
      }
    },
  };
}

/** The Bearer token of a request, if it has an Authorization header. */
export function bearerToken(req: Request): string | null {
  const header = req.get("authorization");
  if (header === undefined) return null;
  const match = BEARER.exec(header);
  if (!match) throw unauthenticated("The Authorization header must be 'Bearer <Firebase ID token>'.");
  return match[1];
}

/** The caller of a verified Firebase ID token. */
export async function idTokenCaller(idToken: string, tokens: TokenVerifier, strength: "read" | "write"): Promise<Caller> {
  const token = await tokens.verify(idToken, strength);
  return {
    uid: token.uid,
    email: typeof token.email === "string" ? token.email : null,
    name: typeof token.name === "string" ? token.name : null,
    signInProvider: typeof token.firebase?.sign_in_provider === "string" ? token.firebase.sign_in_provider : null,
    emailVerified: token.email_verified === true,
  };
}

export function requireCaller(caller: Caller | null): Caller {
  if (!caller) throw unauthenticated("This endpoint needs 'Authorization: Bearer <Firebase ID token>'.");
  return caller;
}

function tokenProblem(error: unknown): unknown {
  switch ((error as { code?: string }).code) {
    case "auth/id-token-revoked":
      return tokenError("token_revoked", "The ID token has been revoked; sign in again.");
    case "auth/user-disabled":
      return tokenError("user_disabled", "The account of this ID token is disabled.");
    case "auth/id-token-expired":
      return tokenError("invalid_token", "The ID token has expired; refresh it.");
    case "auth/argument-error":
    case "auth/invalid-id-token":
    case "auth/user-not-found":
      return tokenError("invalid_token", "The ID token is not a valid Firebase ID token for this project.");
    default:
      return error;
  }
}
