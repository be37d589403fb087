import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { createMarketplaceClient } from "@marketplace/client";
import type { AddressInfo } from "node:net";
import request from "supertest";
import { clientSchemaSource, CLIENT_SCHEMA } from "../../tools/generate-client";
import { createUser, resetEmulators, testApp, testDeps } from "./support/harness";

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
});
