import { DAY_MS } from "../core/time";
import { expiryWarnings, expiryWarningText, isListedTarget } from "./rules";

describe("expiryWarnings (§23: root and targets, from 30 days before they expire)", () => {
  const now = new Date("2027-01-01T00:00:00Z");
  const at = (days: number) => new Date(now.getTime() + days * DAY_MS).toISOString().replace(/\.\d{3}Z$/, "Z");
  it("names each offline role within 30 days of its expiry, or past it, with the whole days left", () => {
    const table: [number, number, string[]][] = [
      [365, 365, []],
      [31, 200, []],
      [30, 200, ["root 30"]],
      [12.5, 29, ["root 12", "targets 29"]],
      [0.5, 400, ["root 0"]],
      [-1, 400, ["root -1"]],
    ];
    for (const [root, targets, expected] of table) {
      const warnings = expiryWarnings({ root: { version: 3, expires: at(root) }, targets: { version: 2, expires: at(targets) } }, now);
      expect([root, targets, warnings.map((warning) => `${warning.role} ${warning.daysLeft}`)]).toEqual([root, targets, expected]);
    }
  });

  it("says what to run, and that clients refuse an expired root", () => {
    expect(expiryWarningText({ role: "targets", version: 2, expires: at(12), daysLeft: 12 })).toMatch(/^targets \(version 2\) expires at 2027-01-13T00:00:00Z, in 12 days: renew it with `tuf rotate targets`/);
    expect(expiryWarningText({ role: "root", version: 3, expires: at(-1), daysLeft: -1 })).toMatch(/expired .* clients refuse/);
  });
});

describe("isListedTarget (§23, §26)", () => {
  const published = { state: "published", revocation: null };
  it("lists published versions of public modules only: not revoked ones, not a business's private modules", () => {
    expect(isListedTarget(published, { revocation: null, businessId: null })).toBe(true);
    expect(isListedTarget({ state: "signed", revocation: null }, { revocation: null, businessId: null })).toBe(false);
    expect(isListedTarget({ ...published, revocation: { reason: "x" } }, { revocation: null, businessId: null })).toBe(false);
    expect(isListedTarget(published, { revocation: { reason: "x" }, businessId: null })).toBe(false);
    expect(isListedTarget(published, { revocation: null, businessId: "b1" })).toBe(false);
  });
});
