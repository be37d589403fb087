import { compactVerify, createLocalJWKSet } from "jose";
import request from "supertest";
import { apiRoutes } from "../src/app";
import { testApp, testDeps } from "./support/harness";

describe("service endpoints", () => {
  it("GET /health answers ok", async () => {
    const response = await request(await testApp()).get("/api/v1/health");
    expect(response.status).toBe(200);
    expect(response.headers["content-type"]).toMatch(/^application\/json; charset=utf-8/);
    expect(response.body).toEqual({ status: "ok" });
  });

  it("GET /signing-keys publishes a JWKS that verifies the service's signatures", async () => {
    const deps = await testDeps();
    const response = await request(await testApp()).get("/api/v1/signing-keys");
    expect(response.status).toBe(200);
    expect(response.body.keys).toEqual([
      { kty: "OKP", crv: "Ed25519", x: expect.any(String), kid: deps.signingKeys.keyId, alg: "EdDSA", use: "sig" },
    ]);
    const jws = await deps.signingKeys.sign({ hello: "world" });
    const { payload, protectedHeader } = await compactVerify(jws, createLocalJWKSet(response.body));
    expect(protectedHeader).toEqual({ alg: "EdDSA", kid: deps.signingKeys.keyId });
    expect(JSON.parse(new TextDecoder().decode(payload))).toEqual({ hello: "world" });
  });

  it("GET /openapi.json is an OpenAPI 3.1 document listing every route the app serves", async () => {
    const deps = await testDeps();
    const response = await request(await testApp()).get("/api/v1/openapi.json");
    expect(response.status).toBe(200);
    expect(response.body.openapi).toBe("3.1.0");
    const documented = Object.entries(response.body.paths as Record<string, object>).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
    );
    const served = apiRoutes(deps).map((route) => `${route.method.toUpperCase()} ${route.path.replace(/:(\w+)/g, "{$1}")}`);
    expect(documented.sort()).toEqual(served.sort());
    expect(documented).toEqual(expect.arrayContaining(["GET /users/me", "GET /subscriptions/{businessId}", "GET /releases/download/{platform}", "GET /releases/{releaseId}/download"]));
    // Every $ref resolves to a component.
    const refs = JSON.stringify(response.body).match(/"\$ref":"#\/components\/schemas\/[^"]+"/g) ?? [];
    for (const ref of refs) {
      const name = ref.split("/").pop()!.replace(/"$/, "");
      expect(response.body.components.schemas).toHaveProperty(name);
    }
  });
});
