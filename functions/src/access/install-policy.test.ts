import fc from "fast-check";
import { allowedOffline } from "../../../docs/examples/verify-install-policy";
import { decide, decidingRule, firstRefusal, type PolicyContent, type PolicyRule, type PolicySubject } from "./install-policy";

type Triple = [number, number, number];

/** Ranges of a small grammar, each with a plain evaluation over version triples (the reference). */
const rangeOf = fc.oneof(
  fc.tuple(fc.constantFrom(">=", "<", ">", "<=", "="), fc.tuple(fc.nat(3), fc.nat(3), fc.nat(3))).map(([operator, v]) => ({
    text: `${operator}${v.join(".")}`,
    holds: (w: Triple) => {
      const order = compare(w, v as Triple);
      return { ">=": order >= 0, "<": order < 0, ">": order > 0, "<=": order <= 0, "=": order === 0 }[operator]!;
    },
  })),
  fc.tuple(fc.integer({ min: 1, max: 3 }), fc.nat(3), fc.nat(3)).map((v) => ({
    text: `^${v.join(".")}`,
    holds: (w: Triple) => compare(w, v) >= 0 && w[0] === v[0],
  })),
  fc.tuple(fc.nat(3), fc.nat(3), fc.nat(3)).map((v) => ({
    text: `~${v.join(".")}`,
    holds: (w: Triple) => compare(w, v) >= 0 && w[0] === v[0] && w[1] === v[1],
  })),
  fc.tuple(fc.tuple(fc.nat(3), fc.nat(3), fc.nat(3)), fc.tuple(fc.nat(3), fc.nat(3), fc.nat(3))).map(([a, b]) => ({
    text: `${a.join(".")} - ${b.join(".")}`,
    holds: (w: Triple) => compare(w, a) >= 0 && compare(w, b) <= 0,
  })),
);

function compare(a: Triple, b: Triple): number {
  for (let i = 0; i < 3; i += 1) if (a[i] !== b[i]) return a[i] - b[i];
  return 0;
}

const MODULES = ["acme.charts", "acme.maps", "globex.notes"];
const publisherOf = (id: string) => id.split(".")[0];

const ruleOf = fc
  .record({
    effect: fc.constantFrom("allow" as const, "block" as const),
    publisher: fc.option(fc.constantFrom("acme", "globex"), { nil: undefined }),
    module: fc.option(fc.constantFrom(...MODULES), { nil: undefined }),
    range: fc.option(rangeOf, { nil: undefined }),
  })
  .filter((rule) => rule.publisher !== undefined || rule.module !== undefined);

const versionOf = fc.tuple(fc.nat(3), fc.nat(3), fc.nat(3));

/**
 * The reference: §26's precedence read literally, level by level (module + range, module,
 * publisher + range, publisher); at the first level with a matching rule, a block among them
 * blocks, else an allow allows; with none, the mode (or the business's own module) decides.
 */
function reference(rules: { effect: string; publisher?: string; module?: string; range?: { holds: (v: Triple) => boolean } }[], mode: string, own: boolean, moduleId: string, version: Triple): boolean {
  const matches = (rule: (typeof rules)[number]) =>
    (rule.module === undefined || rule.module === moduleId) && (rule.publisher === undefined || rule.publisher === publisherOf(moduleId)) && (rule.range === undefined || rule.range.holds(version));
  const levels = [
    (rule: (typeof rules)[number]) => rule.module !== undefined && rule.range !== undefined,
    (rule: (typeof rules)[number]) => rule.module !== undefined && rule.range === undefined,
    (rule: (typeof rules)[number]) => rule.module === undefined && rule.range !== undefined,
    (rule: (typeof rules)[number]) => rule.module === undefined && rule.range === undefined,
  ];
  for (const level of levels) {
    const matching = rules.filter((rule) => level(rule) && matches(rule));
    if (matching.some((rule) => rule.effect === "block")) return false;
    if (matching.length > 0) return true;
  }
  return mode === "open" || own;
}

describe("install policy rules (§26)", () => {
  it("decides as the plain reference over random rule sets, modes and versions", () => {
    fc.assert(
      fc.property(
        fc.array(ruleOf, { maxLength: 12 }),
        fc.constantFrom("open" as const, "allowlist" as const),
        fc.constantFrom(...MODULES),
        versionOf,
        fc.boolean(),
        (generated, mode, moduleId, version, own) => {
          const rules: PolicyRule[] = generated.map(({ effect, publisher, module, range }) => ({ effect, publisher, module, versions: range?.text }));
          const policy: PolicyContent & { businessId: string } = { businessId: "b1", mode, rules, minimumVersions: {}, required: [], message: null };
          const subject: PolicySubject = { id: moduleId, publisherId: publisherOf(moduleId), businessId: own ? "b1" : null };
          expect(decide(policy, subject, version.join(".")).allowed).toBe(reference(generated, mode, own, moduleId, version));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("a minimum version refuses what is below it whatever the rules say, with no rule and a reason", () => {
    fc.assert(
      fc.property(fc.array(ruleOf, { maxLength: 8 }), versionOf, versionOf, (generated, minimum, version) => {
        const rules: PolicyRule[] = generated.map(({ effect, publisher, module, range }) => ({ effect, publisher, module, versions: range?.text }));
        const policy = { businessId: "b1", mode: "open" as const, rules, minimumVersions: { "acme.charts": minimum.join(".") }, required: [], message: null };
        const decision = decide(policy, { id: "acme.charts", publisherId: "acme", businessId: null }, version.join("."));
        if (compare(version, minimum) < 0) expect(decision).toEqual({ allowed: false, rule: null, reason: expect.stringContaining(`below ${minimum.join(".")}`) });
        else expect(decision.allowed).toBe(reference(generated, "open", false, "acme.charts", version));
      }),
      { numRuns: 500 },
    );
  });

  it("names the deciding rule and its reason, else the policy's message", () => {
    const policy = {
      businessId: "b1",
      mode: "open" as const,
      rules: [
        { effect: "block" as const, publisher: "acme", reason: "Acme is under review." },
        { effect: "allow" as const, module: "acme.charts" },
        { effect: "block" as const, module: "acme.charts", versions: "<2.0.0" },
      ],
      minimumVersions: {},
      required: [],
      message: "Ask IT.",
    };
    const charts = { id: "acme.charts", publisherId: "acme", businessId: null };
    expect(decide(policy, charts, "1.9.0")).toEqual({ allowed: false, rule: policy.rules[2], reason: "Ask IT." });
    expect(decide(policy, charts, "2.1.0")).toEqual({ allowed: true, rule: policy.rules[1] });
    expect(decide(policy, { id: "acme.maps", publisherId: "acme", businessId: null }, "1.0.0")).toEqual({ allowed: false, rule: policy.rules[0], reason: "Acme is under review." });
    // Prereleases are in ranges: `<2.0.0` blocks 2.0.0-beta.1.
    expect(decidingRule(policy.rules, charts, "2.0.0-beta.1")).toBe(policy.rules[2]);
  });

  it("an allowlist allows the business's own modules without a rule, and refuses others with its message", () => {
    const policy = { businessId: "b1", mode: "allowlist" as const, rules: [], minimumVersions: {}, required: [], message: "Only approved modules." };
    expect(decide(policy, { id: "b1tools.build", publisherId: "b1tools", businessId: "b1" }, "1.0.0")).toEqual({ allowed: true, rule: null });
    expect(decide(policy, { id: "acme.charts", publisherId: "acme", businessId: null }, "1.0.0")).toEqual({ allowed: false, rule: null, reason: "Only approved modules." });
  });

  it("a version passes several policies exactly when every one of them allows it", () => {
    fc.assert(
      fc.property(fc.array(fc.array(ruleOf, { maxLength: 6 }), { minLength: 1, maxLength: 3 }), fc.uniqueArray(versionOf, { minLength: 1, maxLength: 8, selector: (v) => v.join(".") }), (ruleSets, versions) => {
        const policies = ruleSets.map((generated, index) => ({
          businessId: `b${index}`,
          mode: "open" as const,
          rules: generated.map(({ effect, publisher, module, range }) => ({ effect, publisher, module, versions: range?.text })),
          minimumVersions: {},
          required: [],
          message: null,
        }));
        const allowedByAll = (v: Triple) => ruleSets.every((generated) => reference(generated, "open", false, "acme.charts", v));
        for (const version of versions) {
          expect(firstRefusal(policies, { id: "acme.charts", publisherId: "acme", businessId: null }, version.join(".")) === null).toBe(allowedByAll(version));
        }
      }),
      { numRuns: 500 },
    );
  });

  it("the desktop app's offline check (docs/examples/verify-install-policy.ts) decides as the service does", () => {
    fc.assert(
      fc.property(
        fc.array(ruleOf, { maxLength: 10 }),
        fc.constantFrom("open" as const, "allowlist" as const),
        fc.constantFrom(...MODULES),
        versionOf,
        fc.option(versionOf, { nil: undefined }),
        fc.boolean(),
        (generated, mode, moduleId, version, minimum, own) => {
          const rules: PolicyRule[] = generated.map(({ effect, publisher, module, range }) => ({ effect, publisher, module, versions: range?.text }));
          const minimumVersions = minimum ? { [moduleId]: minimum.join(".") } : {};
          const policy = { businessId: "b1", mode, rules, minimumVersions, required: [], message: null };
          const subject = { id: moduleId, publisherId: publisherOf(moduleId), businessId: own ? "b1" : null };
          const offline = allowedOffline({ ...policy, version: 1, iat: 0 }, subject, version.join("."));
          expect(offline.allowed).toBe(decide(policy, subject, version.join(".")).allowed);
        },
      ),
      { numRuns: 1000 },
    );
  });
});
