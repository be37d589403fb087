/**
 * Runs before `npm start` and `npm test`: on a fresh clone (nothing installed yet), installs the
 * root and functions/ packages exactly as the lock files say, so those two commands are all a
 * newcomer types. Once installed it does nothing; `npm ci` reinstalls on purpose.
 */
const { execFileSync } = require("node:child_process");
const { existsSync } = require("node:fs");
const path = require("node:path");

const root = path.join(__dirname, "..");
const installed = ["node_modules", path.join("functions", "node_modules")].every((dir) =>
  existsSync(path.join(root, dir, ".package-lock.json")),
);
if (!installed) {
  process.stdout.write("First run: installing the packages of package-lock.json and functions/package-lock.json…\n");
  execFileSync("npm", ["ci", "--no-audit", "--no-fund"], { cwd: root, stdio: "inherit" });
}
