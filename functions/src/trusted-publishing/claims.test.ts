import { matchesRule, provenanceOf, type OidcClaims } from "./claims";

const github: OidcClaims = {
  iss: "https://token.actions.githubusercontent.com",
  sub: "repo:acme/charts:ref:refs/heads/main",
  repository: "acme/charts",
  repository_owner: "acme",
  workflow_ref: "acme/charts/.github/workflows/release.yml@refs/heads/main",
  ref: "refs/heads/main",
  sha: "0123abcd",
  run_id: "42",
  environment: "release",
};

describe("trusted publisher matching", () => {
  const rule = { issuer: github.iss, subject: null, claims: { repository: "acme/charts" } };

  it("matches the issuer, subject and every pinned claim exactly", () => {
    expect(matchesRule(rule, github)).toBe(true);
    expect(matchesRule({ ...rule, subject: github.sub, claims: { ...rule.claims, ref: "refs/heads/main", environment: "release" } }, github)).toBe(true);
  });

  it.each([
    ["another issuer", { ...github, iss: "https://gitlab.com" }],
    ["another repository", { ...github, repository: "acme/charts-fork" }],
    ["another case", { ...github, repository: "Acme/Charts" }],
    ["the claim missing", { ...github, repository: undefined }],
    ["the claim not a string", { ...github, repository: ["acme/charts"] }],
  ])("refuses %s", (_what, claims) => {
    expect(matchesRule(rule, claims as OidcClaims)).toBe(false);
  });

  it("refuses another subject or ref when pinned", () => {
    expect(matchesRule({ ...rule, subject: "repo:acme/charts:environment:release" }, github)).toBe(false);
    expect(matchesRule({ ...rule, claims: { ...rule.claims, ref: "refs/heads/release" } }, github)).toBe(false);
  });
});

describe("provenance", () => {
  it("keeps GitHub's claims that exist", () => {
    expect(provenanceOf(github)).toEqual({
      issuer: github.iss,
      subject: github.sub,
      repository: "acme/charts",
      workflowRef: "acme/charts/.github/workflows/release.yml@refs/heads/main",
      ref: "refs/heads/main",
      sha: "0123abcd",
      runId: "42",
    });
    expect(provenanceOf({ iss: "https://ci.example", sub: "job" })).toEqual({ issuer: "https://ci.example", subject: "job" });
  });

  it("reads GitLab's names where GitHub's are absent", () => {
    expect(provenanceOf({ iss: "https://gitlab.com", sub: "project_path:acme/charts:ref_type:branch:ref:main", project_path: "acme/charts", ref: "main", pipeline_id: 7, ci_config_ref_uri: "gitlab.com/acme/charts//.gitlab-ci.yml@refs/heads/main" })).toEqual({
      issuer: "https://gitlab.com",
      subject: "project_path:acme/charts:ref_type:branch:ref:main",
      repository: "acme/charts",
      workflowRef: "gitlab.com/acme/charts//.gitlab-ci.yml@refs/heads/main",
      ref: "main",
      runId: "7",
    });
  });
});
