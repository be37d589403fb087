/**
 * Runs before `npm start` and `npm test`: when the root or functions/ packages are not installed
 * as their lock files say (a fresh clone, or a pull that changed a lock file since the last
 * install), installs both exactly as the lock files say, so those two commands are all anyone
 * types. Otherwise it does nothing; `npm ci` reinstalls on purpose.
 */
const { spawn } = require("node:child_process");
const { readdirSync, readFileSync, statSync } = require("node:fs");
const { clearInterval } = require("node:timers");
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
/** Packages unpacked so far in both node_modules folders (scoped ones counted one by one). */
const installedCount = () =>
  ["node_modules", "functions/node_modules"].reduce((sum, dir) => {
    let names = [];
    try {
      names = readdirSync(path.join(root, dir));
    } catch {
      return sum;
    }
    return sum + names.reduce((count, name) => (name.startsWith("@") ? count + readdirSync(path.join(root, dir, name)).length : name.startsWith(".") ? count : count + 1), 0);
  }, 0);

/** About how many top-level packages both lock files install on this platform (what installedCount nears). */
const expectedCount = () => {
  const fits = (list, value) => !list || list.includes(value) || (list.every((item) => item.startsWith("!")) && !list.includes(`!${value}`));
  return ["", "functions"].reduce((sum, dir) => {
    const lock = JSON.parse(readFileSync(path.join(root, dir, "package-lock.json"), "utf8"));
    const installable = Object.entries(lock.packages).filter(
      ([key, entry]) => /^node_modules\/(@[^/]+\/)?[^/]+$/.test(key) && fits(entry.os, process.platform) && fits(entry.cpu, process.arch),
    );
    return sum + installable.length;
  }, 0);
};

if (!current) {
  process.stdout.write("Installing the packages of package-lock.json and functions/package-lock.json (new clone, or a lock file changed); this takes a few minutes…\n");
  const started = Date.now();
  // npm prints nothing while it works when its output is not a terminal: say how far it got, and
  // what it waits on when no package came since the last line (install scripts, or functions/'s turn).
  const expected = expectedCount();
  let previous = -1;
  const progress = setInterval(() => {
    const installed = installedCount();
    const doing = installed === previous ? "no new package: npm is running install scripts (Node 24 for npm scripts) or linking" : "downloading and unpacking";
    previous = installed;
    process.stdout.write(`  …${Math.round((Date.now() - started) / 1000)} s, ${installed} of about ${expected} packages in place; ${doing}\n`);
  }, 15_000);
  const install = spawn("npm", ["ci", "--no-audit", "--no-fund"], { cwd: root, stdio: "inherit" });
  install.on("exit", (code, signal) => {
    clearInterval(progress);
    if (code !== 0) {
      process.stderr.write(`npm ci failed (${signal ?? `exit ${code}`}).\n`);
      process.exit(code || 1);
    }
    process.stdout.write(`Installed in ${Math.round((Date.now() - started) / 1000)} s.\n`);
  });
}
