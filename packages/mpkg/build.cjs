// Bundles the CLI, the service's package rules and the typed client into dist/mpkg.cjs, so the
// packed package installs on its own with no dependencies (npm pack runs this as prepack).
require("esbuild").buildSync({
  entryPoints: [require("node:path").join(__dirname, "src", "main.ts")],
  outfile: require("node:path").join(__dirname, "dist", "mpkg.cjs"),
  bundle: true,
  platform: "node",
  target: "node20",
  format: "cjs",
  legalComments: "none",
  logLevel: "warning",
});
