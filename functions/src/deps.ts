import type { App } from "firebase-admin/app";
import { getAuth, type Auth } from "firebase-admin/auth";
import { getFirestore, type Firestore } from "firebase-admin/firestore";
import { getStorage } from "firebase-admin/storage";
import type { Config } from "./config";
import type { Actor } from "./core/audit-log";
import { identityToolkit, type IdentityToolkit } from "./core/identity-toolkit";
import type { Logger } from "./core/logger";
import { cursorCodec, type CursorCodec } from "./core/pagination";
import { loadSigningKeys, type SigningKeys } from "./core/signing";
import { bucketStore, type ObjectStore } from "./core/storage";
import { parsePrivateKeys, signerOf, type TufSigner } from "./core/tuf-keys";

/** Everything the app uses from the outside world; createApp receives it whole. */
export interface Deps {
  config: Config;
  db: Firestore;
  auth: Auth;
  store: ObjectStore;
  signingKeys: SigningKeys;
  /** Integrity-checked list cursors (keyed by the signing keys). */
  cursors: CursorCodec;
  identity: IdentityToolkit;
  logger: Logger;
  clock: () => Date;
  /** The TUF repository's online signers (TUF_ONLINE_KEY): the one the repository names signs. */
  tufOnlineSigners: TufSigner[];
}

/**
 * What operator operations (the CLI, the seed) use: no signing keys, identity or config, so they
 * run against any project with Application Default Credentials.
 */
export type OperatorDeps = Pick<Deps, "db" | "auth" | "store" | "clock"> & {
  /** Who runs the operation, for the audit log (the CLI's operator); absent: the system. */
  actor?: Actor;
};

/** The dependencies on one initialised Admin SDK app, as production and local runs share them. */
export async function buildDeps(app: App, config: Config, logger: Logger): Promise<Deps> {
  const clock = () => new Date();
  const signingKeys = await loadSigningKeys(config.moduleSigningKeys);
  return {
    config,
    db: getFirestore(app),
    auth: getAuth(app),
    store: bucketStore(getStorage(app).bucket(config.storageBucket), clock),
    signingKeys,
    cursors: cursorCodec(signingKeys.derivedKey("list-cursor")),
    identity: identityToolkit(config.identityToolkit),
    logger,
    clock,
    tufOnlineSigners: parsePrivateKeys(config.tufOnlineKey).map(signerOf),
  };
}
