/**
 * `npm run signing-key`: prints a new module-signing key set for the MODULE_SIGNING_KEYS secret.
 * `npm run signing-key -- --rotate <current.json>`: a new active key first, then the current
 * keys with their private parts removed, so signatures they made still verify.
 *
 *   npm run -s signing-key > keys.json && firebase functions:secrets:set MODULE_SIGNING_KEYS --data-file keys.json && rm keys.json
 */
import { readFileSync } from "node:fs";
import { generateSigningKey, loadSigningKeys } from "../functions/src/core/signing";

async function main(argv: string[]): Promise<number> {
  const rotateIndex = argv.indexOf("--rotate");
  const known = rotateIndex === -1 ? argv.length === 0 : argv.length === 2 && argv[rotateIndex + 1] !== undefined;
  if (!known) {
    process.stderr.write("usage: signing-key [--rotate <current-key-set.json>]\n");
    return 2;
  }
  const active = await generateSigningKey();
  let previous: object[] = [];
  if (rotateIndex !== -1) {
    try {
      const current = await loadSigningKeys(readFileSync(argv[rotateIndex + 1], "utf8"));
      previous = current.jwks().keys.map(({ kty, crv, x, kid }) => ({ kty, crv, x, kid }));
    } catch (error) {
      process.stderr.write(`error: ${(error as Error).message}\n`);
      return 1;
    }
  }
  process.stdout.write(`${JSON.stringify({ keys: [active, ...previous] })}\n`);
  return 0;
}

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
