/**
 * Runs before `npm start` and `npm test`: when the root or functions/ packages are not installed
 * as their lock files say (a fresh clone, or a pull that changed a lock file since the last
 * install), installs both exactly as the lock files say, so those two commands are all anyone
 * types. Otherwise it does nothing; `npm ci` reinstalls on purpose.
 */
const { execFileSync } = require("node:child_process");
const { statSync } = require("node:fs");
const path = require("node:path");

const root = path.join(__dirname, "..");
const mtime = (file) => {
  try {
    return statSync(path.join(root, file)).mtimeMs;
  } catch {
    return null;
  }
};
// npm writes node_modules/.package-lock.json at every install: older than the lock file means stale.
const current = ["", "functions"].every((dir) => {
  const installedAt = mtime(path.join(dir, "node_modules", ".package-lock.json"));
  return installedAt !== null && installedAt >= mtime(path.join(dir, "package-lock.json"));
});
if (!current) {
  process.stdout.write("Installing the packages of package-lock.json and functions/package-lock.json (new clone, or a lock file changed)…\n");
  execFileSync("npm", ["ci", "--no-audit", "--no-fund"], { cwd: root, stdio: "inherit" });
}
