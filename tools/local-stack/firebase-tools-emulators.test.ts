import { firebaseToolsInternals } from "./firebase-tools-emulators";

/** Fails loudly, naming what moved, when a firebase-tools upgrade breaks what the local stack relies on. */
describe("the firebase-tools internals the local stack uses", () => {
  it("are all there in the installed firebase-tools", () => {
    expect(() => firebaseToolsInternals()).not.toThrow();
  });
});
