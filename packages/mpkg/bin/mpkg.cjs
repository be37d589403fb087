#!/usr/bin/env node
// The publisher CLI. In a clone of the project it runs the TypeScript sources through tsx (always
// current, no build step); an installed package runs its bundle (dist/mpkg.cjs, made at npm pack).
const { existsSync } = require("node:fs");
const path = require("node:path");

const sources = path.join(__dirname, "..", "src", "main.ts");
let run;
if (existsSync(sources)) {
  require("tsx/cjs/api").register();
  run = require(sources).run;
} else {
  run = require("../dist/mpkg.cjs").run;
}
run(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env }).then((code) => {
  process.exitCode = code;
});
