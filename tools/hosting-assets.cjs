/**
 * Copies the API reference's renderer (swagger-ui-dist, pinned by the lock file) into
 * hosting/docs/vendor, so Hosting serves it itself: no CDN at run time. Runs after `npm install`
 * and before a Hosting deploy; the copy is git-ignored.
 */
const { copyFileSync, mkdirSync } = require("node:fs");
const path = require("node:path");

const source = path.dirname(require.resolve("swagger-ui-dist/package.json"));
const target = path.join(__dirname, "..", "hosting", "docs", "vendor");
mkdirSync(target, { recursive: true });
for (const file of ["swagger-ui.css", "swagger-ui-bundle.js", "LICENSE", "NOTICE"]) {
  copyFileSync(path.join(source, file), path.join(target, file));
}
