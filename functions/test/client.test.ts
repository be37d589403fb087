import { readFileSync } from "node:fs";
import type { AddressInfo, Server } from "node:net";
import request from "supertest";
import { installModule } from "../../docs/examples/desktop-app";
import { clientSchemaSource, CLIENT_SCHEMA } from "../../tools/generate-client";
import { bearer, createDeveloper, createUser, publishModule, resetEmulators, testApp } from "./support/harness";

describe("the typed client (packages/client)", () => {
  it("is generated from exactly the document the API serves (npm run client)", async () => {
    const served = (await request(await testApp()).get("/api/v1/openapi.json")).body;
    expect(readFileSync(CLIENT_SCHEMA, "utf8")).toBe(await clientSchemaSource(served));
  });

  describe("the README's desktop-app example (docs/examples/desktop-app.ts)", () => {
    let server: Server;
    let baseUrl: string;
    beforeAll(async () => {
      await resetEmulators();
      const acme = await createDeveloper("acme");
      await publishModule(acme, { id: "acme.maps", name: "Maps", summary: "Maps.", version: "1.0.0", maxAppVersion: "1.9.9" });
      await publishModule(acme, { id: "acme.maps", name: "Maps", summary: "Maps.", version: "2.0.0", minAppVersion: "2.0.0" });
      server = (await testApp()).listen(0, "127.0.0.1");
      await new Promise((resolve) => server.once("listening", resolve));
      baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
    });
    afterAll(() => new Promise((resolve) => server.close(resolve)));

    it("installs the version for the app, checks its bytes, and keeps a certificate for offline use", async () => {
      const user = await createUser();
      const installed = await installModule({ baseUrl, idToken: async () => user.idToken, moduleId: "acme.maps", appVersion: "1.5.0", deviceId: "pc-1" });
      expect(installed.version).toBe("1.0.0");
      expect(installed.usableOfflineUntil.getTime()).toBeGreaterThan(Date.now() + 29 * 24 * 60 * 60 * 1000);
      const profile = await request(await testApp()).get("/api/v1/users/me").set(bearer(user));
      expect(profile.body.activations[0].devices.map((device: { deviceId: string }) => device.deviceId)).toEqual(["pc-1"]);
    });

    it("fails with the API's problem code", async () => {
      const user = await createUser();
      await expect(installModule({ baseUrl, idToken: async () => user.idToken, moduleId: "acme.maps", appVersion: "0.1.0-", deviceId: "pc-1" })).rejects.toThrow(/invalid_request/);
      await expect(installModule({ baseUrl, idToken: async () => user.idToken, moduleId: "acme.nothing", appVersion: "1.0.0", deviceId: "pc-1" })).rejects.toThrow(/^module_not_found/);
    });
  });
});
