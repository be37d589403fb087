import { assertInCredentialScope, assertInNamespace, assertMayChangeVersion, assertMayUseModule, assertOwnsModule, assertPolicyAllows } from "./policy";
import { moduleNotFound } from "./visibility";

const target = { moduleId: "acme.charts", version: "1.0.0" };

describe("module policy", () => {
  it("lets holders of a module's entitlement use it, and everyone use a free one", () => {
    expect(() => assertMayUseModule({ id: "acme.charts", entitlement: "pro" }, new Set(["pro"]))).not.toThrow();
    expect(() => assertMayUseModule({ id: "acme.free" }, new Set())).not.toThrow();
    expect(() => assertMayUseModule({ id: "acme.charts", entitlement: "pro" }, new Set(["beta"]))).toThrow(expect.objectContaining({ code: "not_entitled" }));
    expect(() => assertMayUseModule({ id: "acme.paid", price: { amount: 500 } }, new Set(["module:acme.paid"]))).not.toThrow();
    expect(() => assertMayUseModule({ id: "acme.paid", entitlement: "pro", price: { amount: 500 } }, new Set(["pro"]))).not.toThrow();
    expect(() => assertMayUseModule({ id: "acme.paid", price: { amount: 500 } }, new Set(["pro", "module:acme.other"]))).toThrow(expect.objectContaining({ code: "not_entitled", message: expect.stringContaining("/modules/acme.paid/checkout") }));
  });

  it("lets only the owner change a module, and nobody change a published version", () => {
    expect(() => assertMayChangeVersion(target, null, null, "dev-1")).not.toThrow();
    expect(() => assertMayChangeVersion(target, { developerId: "dev-1", businessId: null }, { state: "signed" }, "dev-1")).not.toThrow();
    expect(() => assertMayChangeVersion(target, { developerId: "dev-2", businessId: null }, { state: "signed" }, "dev-1")).toThrow(expect.objectContaining({ code: "not_owner" }));
    expect(() => assertMayChangeVersion(target, { developerId: "dev-1", businessId: null }, { state: "published" }, "dev-1")).toThrow(
      expect.objectContaining({ code: "version_already_published" }),
    );
    expect(() => assertOwnsModule("acme.charts", { developerId: "dev-2", businessId: null }, "dev-1")).toThrow(expect.objectContaining({ status: 403 }));
    // A business's private module does not exist for whoever does not act for it (§26): the unknown id's 404, word for word.
    const unknown = moduleNotFound("b1tools.build");
    expect(() => assertOwnsModule("b1tools.build", { developerId: "business:b1", businessId: "b1" }, "dev-1")).toThrow(expect.objectContaining({ code: unknown.code, message: unknown.message }));
    expect(() => assertMayChangeVersion({ moduleId: "b1tools.build", version: "1.0.0" }, { developerId: "business:b1", businessId: "b1" }, null, "dev-1")).toThrow(expect.objectContaining({ code: "module_not_found" }));
  });

  it("keeps a publisher to its own namespace", () => {
    expect(() => assertInNamespace("acme.charts", "acme")).not.toThrow();
    expect(() => assertInNamespace("acmecorp.charts", "acme")).toThrow(expect.objectContaining({ code: "namespace_mismatch" }));
  });

  it("keeps a publish token to its modules", () => {
    const oidc = { kind: "oidc" as const, moduleIds: ["acme.charts"] };
    expect(() => assertInCredentialScope("acme.charts", oidc)).not.toThrow();
    expect(() => assertInCredentialScope("acme.other", oidc)).toThrow(expect.objectContaining({ code: "not_owner" }));
    expect(() => assertInCredentialScope("acme.other", { kind: "access-token" })).not.toThrow();
  });

  it("holds every credential to the module's publish policy", () => {
    const oidc = { kind: "oidc" as const, moduleIds: ["acme.charts"] };
    const trusted = { requireTrustedPublishing: true, requireAuthorSignature: false };
    const signed = { requireTrustedPublishing: false, requireAuthorSignature: true };
    expect(() => assertPolicyAllows("acme.charts", trusted, { credential: oidc })).not.toThrow();
    for (const credential of [{ kind: "id-token" as const }, { kind: "access-token" as const }]) {
      expect(() => assertPolicyAllows("acme.charts", trusted, { credential })).toThrow(expect.objectContaining({ code: "policy_violation", status: 403 }));
      expect(() => assertPolicyAllows("acme.charts", { ...trusted, requireTrustedPublishing: false }, { credential })).not.toThrow();
    }
    expect(() => assertPolicyAllows("acme.charts", signed, { credential: oidc, authorSigned: false })).toThrow(expect.objectContaining({ code: "policy_violation" }));
    expect(() => assertPolicyAllows("acme.charts", signed, { credential: oidc, authorSigned: true })).not.toThrow();
    // Publish, yank and unyank carry no package: the signature requirement is the sign's.
    expect(() => assertPolicyAllows("acme.charts", signed, { credential: { kind: "id-token" } })).not.toThrow();
  });
});
