import { createConfig, lintFromString } from "@redocly/openapi-core";
import { readFileSync } from "node:fs";
import path from "node:path";
import { routeTableDocument } from "./app";

interface Document {
  paths: Record<string, Record<string, { responses: Record<string, { description: string; headers?: Record<string, unknown> }> }>>;
}

const document = routeTableDocument() as unknown as Document;

describe("the OpenAPI document", () => {
  it("lints clean with Redocly's strict recommended rules", async () => {
    const config = await createConfig({ extends: ["recommended-strict"] });
    const problems = await lintFromString({ source: JSON.stringify(document), absoluteRef: "openapi.json", config });
    // A redirect-only operation has no 2XX answer by nature; its 302 documents Location instead.
    const redirectOnly = (pointer: string) => {
      const [, encodedPath, method] = /^#\/paths\/([^/]+)\/(\w+)\/responses$/.exec(pointer) ?? [];
      const responses = encodedPath ? document.paths[encodedPath.replaceAll("~1", "/")][method].responses : undefined;
      return Boolean(responses?.["302"]?.headers?.Location);
    };
    // The contract's two installer redirects overlap only in `/releases/download/download`: a release
    // id is never "download" (the schema refuses it), so the literal path always wins.
    // Paths the contract fixes (§4, §10, §16, §18, §20, §28) that only a template can tell apart: "download" is never a
    // release id, and "download" and "activations" are never module ids (a module id has a dot).
    const contractOverlap = (message: string) =>
      [
        "`/releases/download/{platform}` and `/releases/{releaseId}/download`",
        "`/modules/download/{id}` and `/modules/{id}/icon`",
        "`/modules/download/{id}` and `/modules/{id}/reviews`",
        "`/modules/download/{id}` and `/modules/{id}/checkout`",
        "`/modules/download/{id}` and `/modules/{id}/views`",
        "`/modules/{id}/reviews/{reviewId}/report` and `/modules/activations/{moduleId}/devices/{deviceId}`",
      ].some((pair) => message.includes(pair));
    const remaining = problems
      .filter((problem) => !(problem.ruleId === "operation-2xx-response" && redirectOnly(problem.location[0]?.pointer ?? "")))
      .filter((problem) => !(problem.ruleId === "no-ambiguous-paths" && contractOverlap(problem.message)))
      .map((problem) => `${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer}`);
    expect(remaining).toEqual([]);
  });

  it("is described, operation by operation and problem code by problem code, in docs/API.md", () => {
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
