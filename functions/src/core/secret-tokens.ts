import { createHash, randomInt } from "node:crypto";

/** Bearer secrets the service hands out (mpt_, mpo_): random base62, stored only as their SHA-256. */

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** `length` random base62 characters; 43 of them carry 256 bits. */
export const randomBase62 = (length: number) => Array.from({ length }, () => BASE62[randomInt(BASE62.length)]).join("");

/** Where a token is stored: the hex SHA-256 of the token. */
export const tokenHash = (token: string) => createHash("sha256").update(token).digest("hex");
