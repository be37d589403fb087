/** @type {import('jest').Config} */
// Type-checking is tsc's job (npm run lint); Jest only transpiles.
const transform = { "^.+\\.ts$": ["ts-jest", { tsconfig: "tsconfig.json" }] };

module.exports = {
  projects: [
    {
      // Pure rules, each beside its module: no emulator, no Java, no network (npm run test:unit).
      displayName: "unit",
      testEnvironment: "node",
      transform,
      roots: ["<rootDir>/src", "<rootDir>/../tools"],
    },
    {
      // Through HTTP against real emulators, started once by the global setup.
      displayName: "integration",
      testEnvironment: "node",
      transform,
      roots: ["<rootDir>/test"],
      globalSetup: "<rootDir>/test/support/global-setup.ts",
      globalTeardown: "<rootDir>/test/support/global-teardown.ts",
    },
  ],
  // One emulator stack is shared by every integration file; files run one after another so that
  // one file's clean-up never races another's requests.
  maxWorkers: 1,
  testTimeout: 30000,
};
