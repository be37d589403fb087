import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { createMarketplaceClient } from "@marketplace/client";
import type { AddressInfo, Server } from "node:net";
import request from "supertest";
import { installModule } from "../../docs/examples/desktop-app";
import { clientSchemaSource, CLIENT_SCHEMA } from "../../tools/generate-client";
import { bearer, createDeveloper, createUser, publishModule, resetEmulators, testApp, testDeps } from "./support/harness";

describe("the typed client (packages/client)", () => {
  it("is generated from exactly the document the API serves (npm run client)", async () => {
    const served = (await request(await testApp()).get("/api/v1/openapi.json")).body;
    expect(readFileSync(CLIENT_SCHEMA, "utf8")).toBe(await clientSchemaSource(served));
  });

  it("sends every POST with an Idempotency-Key, kept by the API for the caller", async () => {
    await resetEmulators();
    const user = await createUser();
    const server = (await testApp()).listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    try {
      const api = createMarketplaceClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`, token: () => user.idToken });
      const { data } = await api.POST("/businesses", { body: { name: "Client Corp" } });
      expect(data).toEqual({ id: expect.any(String), name: "Client Corp", role: "owner" });
      const keys = await (await testDeps()).db.collection("idempotencyKeys").where("scope", "==", user.uid).get();
      expect(keys.docs.map((doc) => doc.get("state"))).toEqual(["done"]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("retries a 503 after its Retry-After with the same Idempotency-Key, and gives up after its retries", async () => {
    const seen: { method: string; key: string | undefined }[] = [];
    let unavailableLeft = 2;
    const server = createServer((req, res) => {
      seen.push({ method: req.method!, key: req.headers["idempotency-key"] as string | undefined });
      req.resume();
      if (unavailableLeft-- > 0) {
        res.writeHead(503, { "Content-Type": "application/problem+json", "Retry-After": "0" }).end(JSON.stringify({ status: 503, code: "unavailable", title: "Service Unavailable", requestId: "r" }));
      } else {
        res.writeHead(201, { "Content-Type": "application/json" }).end(JSON.stringify({ id: "b1", name: "Retry Corp", role: "owner" }));
      }
    }).listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    try {
      const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
      const { data } = await createMarketplaceClient({ baseUrl }).POST("/businesses", { body: { name: "Retry Corp" } });
      expect(data).toEqual({ id: "b1", name: "Retry Corp", role: "owner" });
      expect(seen).toHaveLength(3);
      expect(seen[0].key).toMatch(/^[0-9a-f-]{36}$/);
      expect(seen.every((call) => call.key === seen[0].key)).toBe(true);

      unavailableLeft = 5;
      seen.length = 0;
      const { error, response } = await createMarketplaceClient({ baseUrl, retries: 1 }).POST("/businesses", { body: { name: "Retry Corp" } });
      expect(response.status).toBe(503);
      expect(error).toMatchObject({ code: "unavailable" });
      expect(seen).toHaveLength(2);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
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
