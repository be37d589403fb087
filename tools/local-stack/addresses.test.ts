import { LOCAL_PUBLIC_BASE_URL } from "../../functions/src/config";
import { emulatorHostEnv, HOST, LOCAL_PORTS, LOCAL_PROJECT_ID } from "./addresses";

/** firebase.json's emulators block is the one source of the local addresses; what cannot read it at run time must agree with it. */
describe("local addresses", () => {
  it("come from firebase.json and .firebaserc", () => {
    expect({ HOST, LOCAL_PORTS, LOCAL_PROJECT_ID }).toEqual({ HOST: "127.0.0.1", LOCAL_PORTS: { api: 5001, firestore: 8080, auth: 9099, storage: 9199 }, LOCAL_PROJECT_ID: "demo-marketplace" });
    expect(emulatorHostEnv(LOCAL_PORTS)).toMatchObject({ FIRESTORE_EMULATOR_HOST: "127.0.0.1:8080", FIREBASE_AUTH_EMULATOR_HOST: "127.0.0.1:9099", STORAGE_EMULATOR_HOST: "http://127.0.0.1:9199" });
  });

  it("agree with the function's own default of PUBLIC_BASE_URL (the function does not ship firebase.json)", () => {
    expect(LOCAL_PUBLIC_BASE_URL).toBe(`http://${HOST}:${LOCAL_PORTS.api}/api/v1`);
  });
});
