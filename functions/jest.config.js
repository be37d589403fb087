/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: "node",
  roots: ["<rootDir>/src", "<rootDir>/test"],
  // Type-checking is tsc's job (npm run lint); Jest only transpiles.
  transform: { "^.+\\.ts$": ["ts-jest", { tsconfig: "tsconfig.json" }] },
  globalSetup: "<rootDir>/test/global-setup.ts",
  globalTeardown: "<rootDir>/test/global-teardown.ts",
  // One emulator stack is shared by every test file; files run one after another so that one
  // file's clean-up never races another's requests.
  maxWorkers: 1,
  // The in-process emulators keep sockets open until the process ends; exit once teardown is done.
  forceExit: true,
  testTimeout: 30000,
};
