import type { Auth, DecodedIdToken } from "firebase-admin/auth";
import type { Request } from "express";
import { tokenError, unauthenticated } from "./errors";
import { withinDeadline } from "./deadline";

/** A developer account (`developers/{uid}`), as the routes that need one see their caller. */
export interface DeveloperAccount {
  id: string;
  email: string | null;
  displayName: string;
  publisherId: string;
  createdAt: Date;
}

/** Who is calling, from a verified Firebase ID token. */
export interface Caller {
  uid: string;
  email: string | null;
  name: string | null;
  token: DecodedIdToken;
  /** The caller's developer account, on routes that require one. */
  developer?: DeveloperAccount;
}

export type DeveloperCaller = Caller & { developer: DeveloperAccount };

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * Verifies the Bearer ID token of a request, if it has one.
 *
 * Revocation and disabled accounts are always checked (`checkRevoked`), on every authenticated
 * request, not only on developer writes: the extra Auth lookup costs one round trip, and a
 * disabled or signed-out account stops working at once instead of when its token expires.
 */
export async function authenticateRequest(req: Request, auth: Auth): Promise<Caller | null> {
  const header = req.get("authorization");
  if (header === undefined) return null;
  const match = BEARER.exec(header);
  if (!match) throw unauthenticated("The Authorization header must be 'Bearer <Firebase ID token>'.");
  const token = await verify(auth, match[1]);
  return {
    uid: token.uid,
    email: typeof token.email === "string" ? token.email : null,
    name: typeof token.name === "string" ? token.name : null,
    token,
  };
}

export function requireCaller(caller: Caller | null): Caller {
  if (!caller) throw unauthenticated("This endpoint needs 'Authorization: Bearer <Firebase ID token>'.");
  return caller;
}

async function verify(auth: Auth, idToken: string): Promise<DecodedIdToken> {
  try {
    return await withinDeadline("Auth", auth.verifyIdToken(idToken, true));
  } catch (error) {
    switch ((error as { code?: string }).code) {
      case "auth/id-token-revoked":
        throw tokenError("token_revoked", "The ID token has been revoked; sign in again.");
      case "auth/user-disabled":
        throw tokenError("user_disabled", "The account of this ID token is disabled.");
      case "auth/id-token-expired":
        throw tokenError("invalid_token", "The ID token has expired; refresh it.");
      case "auth/argument-error":
      case "auth/invalid-id-token":
      case "auth/user-not-found":
        throw tokenError("invalid_token", "The ID token is not a valid Firebase ID token for this project.");
      default:
        throw error;
    }
  }
}
