import { signaturePayload } from "./signature";

describe("the signature payload", () => {
  it("names the package, its publisher and the signing time in whole seconds, and nothing else", () => {
    const payload = signaturePayload(
      { moduleId: "acme.charts", version: "1.2.3", sha256: "ab".repeat(32), size: 42, publisherId: "acme" },
      new Date("2026-11-22T10:00:00.999Z"),
    );
    expect(payload).toEqual({ moduleId: "acme.charts", version: "1.2.3", sha256: "ab".repeat(32), size: 42, publisherId: "acme", iat: 1795341600 });
    expect(Object.keys(payload)).toEqual(["moduleId", "version", "sha256", "size", "publisherId", "iat"]);
  });

  it("adds the CI's provenance and the author's key id when there are some", () => {
    const provenance = { issuer: "https://token.actions.githubusercontent.com", subject: "repo:acme/charts:ref:refs/heads/main", repository: "acme/charts" };
    const payload = signaturePayload(
      { moduleId: "acme.charts", version: "1.2.3", sha256: "ab".repeat(32), size: 42, publisherId: "acme", provenance, authorKeyId: "k1" },
      new Date("2026-11-22T10:00:00Z"),
    );
    expect(payload).toMatchObject({ provenance, authorKeyId: "k1" });
  });
});
