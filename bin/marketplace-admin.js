#!/usr/bin/env node
// The operator CLI as a command: runs tools/admin/main.ts through tsx (no build step).
require("tsx/cjs/api").register();
const { main } = require("../tools/admin/main.ts");

main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env }).then((code) => {
  process.exitCode = code;
});
