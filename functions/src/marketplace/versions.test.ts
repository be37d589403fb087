import { chooseVersion, isCompatible, withEntry, type VersionSummary } from "./versions";

const entry = (version: string, minAppVersion: string | null = null, maxAppVersion: string | null = null, yanked = false, revoked = false): VersionSummary => ({
  version,
  minAppVersion,
  maxAppVersion,
  yanked,
  revoked,
  publishedAt: null,
  hasIcon: false,
});

describe("module version choice", () => {
  it("holds app versions within inclusive bounds", () => {
    expect(isCompatible(entry("1.0.0", "1.10.0", "2.0.0"), "1.10.0")).toBe(true);
    expect(isCompatible(entry("1.0.0", "1.10.0", "2.0.0"), "2.0.0")).toBe(true);
    expect(isCompatible(entry("1.0.0", "1.10.0", "2.0.0"), "1.9.9")).toBe(false);
    expect(isCompatible(entry("1.0.0", "1.10.0", "2.0.0"), "2.0.1")).toBe(false);
    expect(isCompatible(entry("1.0.0"), "0.0.1")).toBe(true);
  });

  it("chooses the highest version not yanked, compatible with the app when it is given", () => {
    const summary = [entry("3.0.0", "3.0.0"), entry("2.1.0", null, null, true), entry("2.0.0", "1.5.0", "2.9.9"), entry("1.0.0")];
    expect(chooseVersion(summary)).toBe("3.0.0");
    expect(chooseVersion(summary, "2.5.0")).toBe("2.0.0");
    expect(chooseVersion(summary, "1.0.0")).toBe("1.0.0");
    expect(chooseVersion([entry("1.0.0", null, null, true)])).toBeNull();
    expect(chooseVersion([entry("2.0.0", "5.0.0")], "1.0.0")).toBeNull();
  });

  it("never chooses a revoked version", () => {
    const summary = [entry("3.0.0", null, null, false, true), entry("2.0.0")];
    expect(chooseVersion(summary)).toBe("2.0.0");
    expect(chooseVersion(summary, "1.0.0")).toBe("2.0.0");
    expect(chooseVersion([entry("1.0.0", null, null, false, true)])).toBeNull();
  });

  it("keeps the summary ordered and replaces an entry of the same version", () => {
    const summary = withEntry(withEntry([entry("1.0.0")], entry("1.10.0")), entry("1.9.0"));
    expect(summary.map((known) => known.version)).toEqual(["1.10.0", "1.9.0", "1.0.0"]);
    expect(withEntry(summary, entry("1.9.0", null, null, true)).find((known) => known.version === "1.9.0")?.yanked).toBe(true);
  });
});
