import { createHash } from "node:crypto";
import { cohortOf, compareBySemverDescending, highestVersion, offeredRelease } from "./rules";

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

describe("staged rollouts", () => {
  const release = (id: string, version: string, rolloutPercentage = 100, yanked = false) => ({ id, version, rolloutPercentage, yankedAt: yanked ? new Date() : null });

  it("puts a caller in a cohort by the formula of the contract", () => {
    // sha256("device-1:win32-x64-stable-1.2.0"), first four bytes, big-endian, / 2^32 * 100.
    const digest = createHash("sha256").update("device-1:win32-x64-stable-1.2.0").digest();
    expect(cohortOf("device-1", "win32-x64-stable-1.2.0")).toBeCloseTo((digest.readUInt32BE(0) / 4294967296) * 100, 10);
    const cohorts = Array.from({ length: 2000 }, (_, i) => cohortOf(`device-${i}`, "r"));
    expect(Math.min(...cohorts)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...cohorts)).toBeLessThan(100);
    // About a tenth of callers fall below 10.
    expect(cohorts.filter((cohort) => cohort < 10).length).toBeGreaterThan(150);
    expect(cohorts.filter((cohort) => cohort < 10).length).toBeLessThan(250);
  });

  it("offers the highest release that includes the caller, never a yanked one", () => {
    const releases = [release("a", "1.0.0"), release("b", "1.1.0", 10), release("c", "1.2.0", 100, true)];
    const inside = Array.from({ length: 200 }, (_, i) => `d-${i}`).find((id) => cohortOf(id, "b") < 10)!;
    const outside = Array.from({ length: 200 }, (_, i) => `d-${i}`).find((id) => cohortOf(id, "b") >= 10)!;
    expect(offeredRelease(releases, inside)?.id).toBe("b");
    expect(offeredRelease(releases, outside)?.id).toBe("a");
    // Without a staging id: the highest with a rollout above 0, its percentage travels with it.
    expect(offeredRelease(releases, undefined)?.id).toBe("b");
    // Halted (0): nobody new is offered it.
    const halted = [release("a", "1.0.0"), release("b", "1.1.0", 0)];
    expect(offeredRelease(halted, inside)?.id).toBe("a");
    expect(offeredRelease(halted, undefined)?.id).toBe("a");
    expect(offeredRelease([release("c", "1.2.0", 100, true)], undefined)).toBeNull();
  });
});
