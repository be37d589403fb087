import { parse } from "yaml";
import type { ReleaseRecord } from "./release-store";
import { electronFeed, feedChannel, FEED_FILES, jsonUpdate } from "./feeds";

const release: ReleaseRecord & { sha512: string } = {
  id: "win32-x64-stable-1.2.0",
  version: "1.2.0",
  platform: "win32",
  arch: "x64",
  channel: "stable",
  fileName: "Setup-1.2.0.exe",
  storagePath: "releases/win32-x64-stable-1.2.0/Setup-1.2.0.exe",
  size: 1234,
  sha256: "ab".repeat(32),
  sha512: "c2hhNTEy",
  notes: "Faster.",
  publishedAt: new Date("2026-05-01T10:00:00Z"),
  rolloutPercentage: 25,
  yankedAt: null,
  yankReason: null,
  haltReason: null,
  ramp: null,
  blockmapPath: null,
};
const url = "https://market.example/api/v1/releases/win32-x64-stable-1.2.0/download";

describe("update feeds", () => {
  it("reads the channel from a feed file's name, and refuses another platform's suffix", () => {
    expect(FEED_FILES.map((file) => [file, feedChannel(file, "win32"), feedChannel(file, "darwin"), feedChannel(file, "linux")])).toEqual([
      ["latest.yml", "stable", null, null],
      ["latest-mac.yml", null, "stable", null],
      ["latest-linux.yml", null, null, "stable"],
      ["beta.yml", "beta", null, null],
      ["beta-mac.yml", null, "beta", null],
      ["beta-linux.yml", null, null, "beta"],
    ]);
  });

  it("writes electron-updater's channel file, with the staging percentage only for a staged release asked without a staging id", () => {
    expect(parse(electronFeed(release, url, true))).toEqual({
      version: "1.2.0",
      files: [{ url, sha512: "c2hhNTEy", size: 1234 }],
      path: url,
      sha512: "c2hhNTEy",
      releaseDate: "2026-05-01T10:00:00.000Z",
      releaseNotes: "Faster.",
      stagingPercentage: 25,
    });
    expect(parse(electronFeed(release, url, false))).not.toHaveProperty("stagingPercentage");
    expect(parse(electronFeed({ ...release, rolloutPercentage: 100, notes: null }, url, true))).not.toHaveProperty("stagingPercentage");
    expect(parse(electronFeed({ ...release, notes: null }, url, true))).not.toHaveProperty("releaseNotes");
  });

  it("answers the JSON update check only for a newer release, by semver", () => {
    expect(jsonUpdate(release, "1.1.9", url)).toEqual({
      version: "1.2.0",
      name: "1.2.0",
      notes: "Faster.",
      pub_date: "2026-05-01T10:00:00.000Z",
      url,
      sha256: release.sha256,
      sha512: "c2hhNTEy",
      size: 1234,
    });
    expect(jsonUpdate(release, "1.2.0", url)).toBeNull();
    expect(jsonUpdate(release, "1.10.0", url)).toBeNull();
    expect(jsonUpdate(release, "1.2.0-beta.3", url)?.version).toBe("1.2.0");
  });
});
