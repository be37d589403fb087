/**
 * Builds the Hosting site (contract §16) into a folder, `hosting/` by default:
 * - the pages of packages/web, bundled by Vite with content-hashed file names under assets/;
 * - the API reference at /docs, with its renderer (swagger-ui-dist, pinned by the lock file)
 *   copied next to it, so the site serves it itself: no CDN at run time.
 * `npm run build`, `npm start` and a Hosting deploy run it; the folder is git-ignored.
 *
 *   npx tsx tools/build-site.ts [outDir]
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync } from "node:fs";
import path from "node:path";

export const HOSTING_DIR = path.join(__dirname, "..", "hosting");
const WEB_DIR = path.join(__dirname, "..", "packages", "web");

/** Builds the site into `outDir` (emptied first); returns its absolute path. */
export function buildSite(outDir = HOSTING_DIR): string {
  const target = path.resolve(outDir);
  const vite = path.join(path.dirname(require.resolve("vite/package.json", { paths: [WEB_DIR] })), "bin", "vite.js");
  const built = spawnSync(process.execPath, [vite, "build", "--outDir", target, "--emptyOutDir", "--logLevel", "warn"], { cwd: WEB_DIR, stdio: "inherit" });
  if (built.status !== 0) throw new Error(`The web pages did not build (vite exited with ${built.status}).`);
  const swagger = path.dirname(require.resolve("swagger-ui-dist/package.json"));
  const vendor = path.join(target, "docs", "vendor");
  mkdirSync(vendor, { recursive: true });
  for (const file of ["swagger-ui.css", "swagger-ui-bundle.js", "LICENSE", "NOTICE"]) {
    copyFileSync(path.join(swagger, file), path.join(vendor, file));
  }
  return target;
}

if (require.main === module) buildSite(process.argv[2]);
