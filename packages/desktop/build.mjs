// Bundles the SDK's sources, with the pieces of the project it shares (the typed client, the
// offline checks of docs/examples, the service's strict ZIP reader), into dist/index.js: ESM that
// Node 20 and Electron's main process import. Its npm dependencies stay outside the bundle.
import { buildSync } from "esbuild";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";

const here = `${dirname(fileURLToPath(import.meta.url))}/`;
buildSync({
  entryPoints: [`${here}src/index.ts`],
  outfile: `${here}dist/index.js`,
  bundle: true,
  platform: "node",
  target: "node20",
  format: "esm",
  external: ["jose", "openapi-fetch", "semver", "tuf-js"],
  legalComments: "none",
  logLevel: "warning",
});
