import type { EntitlementGrant } from "../access/rules";
import { ApiError } from "../core/errors";
import type { ActivationRecord } from "../accounts/activation-store";
import { DEVICE_ID } from "../core/schemas";
import { certificateExpiry, confirmOnDevice, releaseDevice } from "./rules";

const DAY = 24 * 60 * 60;
const at = (iso: string) => new Date(iso);

describe("certificateExpiry", () => {
  const issuedAt = Date.parse("2026-06-01T00:00:00Z") / 1000;
  const periodEnd = at("2026-06-10T00:00:00Z");
  const ends: Record<string, Date> = { "biz-a": periodEnd, "biz-b": at("2026-06-20T00:00:00Z"), "sub_1": at("2026-06-30T00:00:00Z") };
  const subscriptions = (grant: EntitlementGrant) => (grant.source === "direct" || (grant.source === "purchase" && !grant.businessId && grant.purchaseId?.startsWith("pi_")) ? null : ends[grant.purchaseId ?? grant.businessId!]);

  it("gives free modules and direct grants the whole lifetime", () => {
    expect(certificateExpiry(issuedAt, 30 * DAY, null, [], subscriptions)).toBe(issuedAt + 30 * DAY);
    const direct = [{ key: "pro", source: "direct" as const }, { key: "pro", source: "subscription" as const, businessId: "biz-a" }];
    expect(certificateExpiry(issuedAt, 30 * DAY, "pro", direct, subscriptions)).toBe(issuedAt + 30 * DAY);
  });

  it("ends a subscription's grant at its period end + 3 days, the latest of several", () => {
    const one = [{ key: "pro", source: "subscription" as const, businessId: "biz-a" }];
    expect(certificateExpiry(issuedAt, 30 * DAY, "pro", one, subscriptions)).toBe(periodEnd.getTime() / 1000 + 3 * DAY);
    const two = [...one, { key: "pro", source: "subscription" as const, businessId: "biz-b" }];
    expect(certificateExpiry(issuedAt, 30 * DAY, "pro", two, subscriptions)).toBe(Date.parse("2026-06-23T00:00:00Z") / 1000);
    expect(certificateExpiry(issuedAt, 5 * DAY, "pro", two, subscriptions)).toBe(issuedAt + 5 * DAY);
  });

  it("bounds a subscription purchase by its period end, and lets a one-time purchase run the whole lifetime", () => {
    const subscribed = [{ key: "module:acme.paid", source: "purchase" as const, purchaseId: "sub_1" }];
    expect(certificateExpiry(issuedAt, 60 * DAY, "module:acme.paid", subscribed, subscriptions)).toBe(Date.parse("2026-07-03T00:00:00Z") / 1000);
    const bought = [...subscribed, { key: "module:acme.paid", source: "purchase" as const, purchaseId: "pi_1" }];
    expect(certificateExpiry(issuedAt, 60 * DAY, "module:acme.paid", bought, subscriptions)).toBe(issuedAt + 60 * DAY);
  });

  it("lets a fallback free the certificate from a period end only when it is the only grant (§27 \"Edges\")", () => {
    const fallbackOnly = (grant: EntitlementGrant) => (grant.source === "fallback" ? null : subscriptions(grant));
    const kept = { key: "module:acme.paid", source: "fallback" as const, purchaseId: "sub_0", fallbackUntil: at("2025-01-01T00:00:00Z") };
    expect(certificateExpiry(issuedAt, 60 * DAY, "module:acme.paid", [kept], fallbackOnly)).toBe(issuedAt + 60 * DAY);
    const beside = [kept, { key: "module:acme.paid", source: "purchase" as const, purchaseId: "sub_1" }];
    expect(certificateExpiry(issuedAt, 60 * DAY, "module:acme.paid", beside, fallbackOnly)).toBe(Date.parse("2026-07-03T00:00:00Z") / 1000);
  });

  it("rounds down to whole seconds", () => {
    const odd = () => new Date(Date.parse("2026-06-10T00:00:00Z") + 999);
    const grant = [{ key: "pro", source: "subscription" as const, businessId: "x" }];
    expect(certificateExpiry(issuedAt, 30 * DAY, "pro", grant, odd)).toBe(Date.parse("2026-06-13T00:00:00Z") / 1000);
  });
});

describe("devices", () => {
  const now = at("2026-06-01T00:00:00Z");
  const later = at("2026-06-02T00:00:00Z");
  const confirm = (current: ActivationRecord | null, deviceId: string, when = now, limit = 3) =>
    confirmOnDevice(current, { moduleId: "acme.maps", version: "1.0.0", deviceId, now: when }, limit);
  const codeOf = (run: () => unknown) => {
    try {
      run();
    } catch (error) {
      return (error as ApiError).code;
    }
    return null;
  };

  it("adds devices up to the limit, refuses the next, and always takes a known one", () => {
    const three = ["a", "b", "c"].reduce<ActivationRecord | null>((activation, id) => confirm(activation, id), null)!;
    expect(three.devices.map((device) => device.deviceId)).toEqual(["a", "b", "c"]);
    expect(codeOf(() => confirm(three, "d"))).toBe("device_limit_reached");
    const again = confirm(three, "b", later);
    expect(again.devices[1]).toEqual({ deviceId: "b", activatedAt: now, lastSeenAt: later, version: "1.0.0" });
    expect(again.activatedAt).toEqual(now);
    expect(again.updatedAt).toEqual(later);
    expect(again.deviceId).toBe("b");
  });

  it("frees a slot on release, and refuses an unknown device", () => {
    const two = confirm(confirm(null, "a"), "b");
    const released = releaseDevice(two, "acme.maps", "b", later);
    expect(released.devices.map((device) => device.deviceId)).toEqual(["a"]);
    expect(released.deviceId).toBeNull();
    expect(codeOf(() => releaseDevice(released, "acme.maps", "b", later))).toBe("device_not_found");
    expect(codeOf(() => releaseDevice(null, "acme.maps", "a", later))).toBe("device_not_found");
  });

  it("accepts the contract's device ids only", () => {
    for (const id of ["pc-1", "A.b_c:d-e", "x".repeat(128)]) expect(DEVICE_ID.test(id)).toBe(true);
    for (const id of ["", "x".repeat(129), "a b", "a/b", "é"]) expect(DEVICE_ID.test(id)).toBe(false);
  });
});
