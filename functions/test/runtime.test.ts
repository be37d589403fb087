import { readFileSync } from "node:fs";
import path from "node:path";

/**
 * The function deploys on a runtime firebase-tools still supports, and the tests run on the Node
 * version of that runtime (the `node` devDependency puts it first on the PATH of npm scripts).
 */
const root = path.join(__dirname, "..", "..");
const firebaseJson = JSON.parse(readFileSync(path.join(root, "firebase.json"), "utf8"));
const functionsPackage = JSON.parse(readFileSync(path.join(root, "functions", "package.json"), "utf8"));
/* eslint-disable @typescript-eslint/no-require-imports */
const supported = require("firebase-tools/lib/deploy/functions/runtimes/supported");
const { RUNTIMES } = require("firebase-tools/lib/deploy/functions/runtimes/supported/types");
/* eslint-enable @typescript-eslint/no-require-imports */

const runtime: string = firebaseJson.functions[0].runtime;
const major = (version: string) => Number(/\d+/.exec(version)![0]);

describe("the deploy runtime", () => {
  it("is one firebase-tools lists as GA and lets deploy through without a deprecation warning", () => {
    expect(RUNTIMES[runtime]).toEqual(expect.objectContaining({ status: "GA" }));
    expect(new Date(RUNTIMES[runtime].deprecationDate).getTime()).toBeGreaterThan(Date.now());
    expect(() => supported.guardVersionSupport(runtime, new Date())).not.toThrow();
  });

  it("is the Node version of functions/package.json engines and of this test run", () => {
    expect(major(functionsPackage.engines.node)).toBe(major(runtime));
    expect(major(process.versions.node)).toBe(major(runtime));
  });
});
