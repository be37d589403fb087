// Firestore's production limits, measured where the emulator does not enforce them (§25): every
// commit the process makes (batches, transactions, single writes: all go through
// WriteBatch._commit in @google-cloud/firestore) is recorded once it succeeds: how many writes
// each document took, and the largest commit. `npm run bench` reads them per row from each API
// process (bench-server.cjs) and reports the busiest document's writes per second and the
// largest commit (bench-harness.ts reportLimits).
const path = require("node:path");

// The package first: its modules require each other in an order of their own.
const { WriteBatch } = require(path.join(__dirname, "..", "functions", "node_modules", "@google-cloud", "firestore"));

let writes = new Map();
let largest = { writes: 0, sample: [] };

const commit = WriteBatch.prototype._commit;
WriteBatch.prototype._commit = async function recordedCommit(...args) {
  const paths = this._ops.map((op) => op.docPath);
  const result = await commit.apply(this, args);
  for (const docPath of paths) writes.set(docPath, (writes.get(docPath) ?? 0) + 1);
  if (paths.length > largest.writes) largest = { writes: paths.length, sample: [...new Set(paths.map((docPath) => docPath.split("/").filter((_, index) => index % 2 === 0).join("/")))].slice(0, 8) };
  return result;
};

/** What was recorded since the last reset: the 50 most written documents, and the largest commit (its collections). */
function limits() {
  const busiest = [...writes].sort((a, b) => b[1] - a[1]).slice(0, 50);
  return { busiest, largest };
}

function reset() {
  writes = new Map();
  largest = { writes: 0, sample: [] };
}

module.exports = { limits, reset };
