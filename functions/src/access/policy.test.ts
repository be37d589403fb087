import { assertInNamespace, assertMayChangeVersion, assertMayUseModule, assertOwnsModule } from "./policy";

const target = { moduleId: "acme.charts", version: "1.0.0" };

describe("module policy", () => {
  it("lets holders of a module's entitlement use it, and everyone use a free one", () => {
    expect(() => assertMayUseModule("acme.charts", { entitlement: "pro" }, new Set(["pro"]))).not.toThrow();
    expect(() => assertMayUseModule("acme.free", {}, new Set())).not.toThrow();
    expect(() => assertMayUseModule("acme.charts", { entitlement: "pro" }, new Set(["beta"]))).toThrow(expect.objectContaining({ code: "not_entitled" }));
  });

  it("lets only the owner change a module, and nobody change a published version", () => {
    expect(() => assertMayChangeVersion(target, null, null, "dev-1")).not.toThrow();
    expect(() => assertMayChangeVersion(target, { developerId: "dev-1" }, { state: "signed" }, "dev-1")).not.toThrow();
    expect(() => assertMayChangeVersion(target, { developerId: "dev-2" }, { state: "signed" }, "dev-1")).toThrow(expect.objectContaining({ code: "not_owner" }));
    expect(() => assertMayChangeVersion(target, { developerId: "dev-1" }, { state: "published" }, "dev-1")).toThrow(
      expect.objectContaining({ code: "version_already_published" }),
    );
    expect(() => assertOwnsModule("acme.charts", { developerId: "dev-2" }, "dev-1")).toThrow(expect.objectContaining({ status: 403 }));
  });

  it("keeps a publisher to its own namespace", () => {
    expect(() => assertInNamespace("acme.charts", "acme")).not.toThrow();
    expect(() => assertInNamespace("acmecorp.charts", "acme")).toThrow(expect.objectContaining({ code: "namespace_mismatch" }));
  });
});
