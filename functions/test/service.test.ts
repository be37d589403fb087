import { createConfig, lintFromString } from "@redocly/openapi-core";
import { compactVerify, createLocalJWKSet } from "jose";
import { readFileSync } from "node:fs";
import path from "node:path";
import request from "supertest";
import { apiRoutes } from "../src/app";
import { testApp, testDeps } from "./harness";

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
    expect(documented).toEqual(expect.arrayContaining(["GET /users/me", "GET /subscriptions/{businessId}", "GET /releases/download/win32"]));
    // Every $ref resolves to a component.
    const refs = JSON.stringify(response.body).match(/"\$ref":"#\/components\/schemas\/[^"]+"/g) ?? [];
    for (const ref of refs) {
      const name = ref.split("/").pop()!.replace(/"$/, "");
      expect(response.body.components.schemas).toHaveProperty(name);
    }
  });

  it("GET /openapi.json lints clean with Redocly's strict recommended rules", async () => {
    const document = (await request(await testApp()).get("/api/v1/openapi.json")).body;
    const config = await createConfig({ extends: ["recommended-strict"] });
    const problems = await lintFromString({ source: JSON.stringify(document), absoluteRef: "openapi.json", config });
    // A redirect-only operation has no 2XX answer by nature; its 302 documents Location instead.
    const redirectOnly = (pointer: string) => {
      const [, encodedPath, method] = /^#\/paths\/([^/]+)\/(\w+)\/responses$/.exec(pointer) ?? [];
      const responses = encodedPath && document.paths[encodedPath.replaceAll("~1", "/")][method].responses;
      return Boolean(responses?.["302"]?.headers?.Location);
    };
    const remaining = problems
      .filter((problem) => !(problem.ruleId === "operation-2xx-response" && redirectOnly(problem.location[0]?.pointer ?? "")))
      .map((problem) => `${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer}`);
    expect(remaining).toEqual([]);
  });

  it("docs/API.md describes every operation and every problem code of the document", async () => {
    const document = (await request(await testApp()).get("/api/v1/openapi.json")).body as {
      paths: Record<string, Record<string, { responses: Record<string, { description: string }> }>>;
    };
    const prose = readFileSync(path.join(__dirname, "..", "..", "docs", "API.md"), "utf8");
    const headings = new Set([...prose.matchAll(/^#{2,4} `(GET|POST|PUT|PATCH|DELETE) ([^`]+)`/gm)].map(([, method, route]) => `${method} ${route}`));
    const operations = Object.entries(document.paths).flatMap(([route, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${route}`));
    expect([...headings].sort()).toEqual(operations.sort());
    const codes = new Set(
      Object.values(document.paths).flatMap((methods) =>
        Object.values(methods).flatMap((operation) =>
          Object.values(operation.responses).flatMap((response) => /^Problem: (.*)\.$/.exec(response.description)?.[1].split(", ") ?? []),
        ),
      ),
    );
    expect([...codes].filter((code) => !prose.includes(`\`${code}\``))).toEqual([]);
  });
});
