import { compareBySemverDescending, highestVersion } from "./rules";

describe("release ordering", () => {
  const versions = ["1.9.0", "1.10.0", "1.10.0-beta.2", "0.9.12", "2.0.0-rc.1", "1.10.0-beta.10"];

  it("sorts by semver, not by text: 1.10.0 above 1.9.0, releases above their pre-releases", () => {
    const sorted = versions.map((version) => ({ version })).sort(compareBySemverDescending).map((r) => r.version);
    expect(sorted).toEqual(["2.0.0-rc.1", "1.10.0", "1.10.0-beta.10", "1.10.0-beta.2", "1.9.0", "0.9.12"]);
  });

  it("picks the highest version, or nothing from nothing", () => {
    expect(highestVersion(["1.9.0", "1.10.0", "1.2.0"].map((version) => ({ version })))?.version).toBe("1.10.0");
    expect(highestVersion([])).toBeNull();
  });
});
