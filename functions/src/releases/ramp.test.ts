import { rampDecision, type RampSchedule } from "./rules";

const now = new Date("2026-11-24T12:00:00Z");
const hoursAgo = (hours: number) => new Date(now.getTime() - hours * 3_600_000);
const ramp = (fields: Partial<RampSchedule> = {}): RampSchedule => ({
  steps: [1, 5, 25, 100],
  everyHours: 24,
  maxFailureRate: 0.02,
  maxCrashRate: 0.01,
  minReports: 50,
  step: 0,
  stepStartedAt: hoursAgo(25),
  state: "running",
  ...fields,
});
const healthy = { failureRate: { rate: 0.01, reports: 100 }, crashRate: { rate: 0, reports: 80 } };

describe("rampDecision (§19)", () => {
  it("advances a step that has lasted its hours and is healthy with enough reports, and says when it reaches the last", () => {
    expect(rampDecision(ramp(), healthy, now)).toEqual({ kind: "advance", to: 1, done: false });
    expect(rampDecision(ramp({ step: 2 }), healthy, now)).toEqual({ kind: "advance", to: 3, done: true });
  });

  it("waits for the step's hours, for enough reports, and at the last step", () => {
    expect(rampDecision(ramp({ stepStartedAt: hoursAgo(23) }), healthy, now)).toMatchObject({ kind: "wait" });
    expect(rampDecision(ramp(), { ...healthy, crashRate: { rate: 0, reports: 49 } }, now)).toEqual({ kind: "wait", reason: "crash rate: 49 of 50 reports" });
    expect(rampDecision(ramp({ step: 3 }), healthy, now)).toEqual({ kind: "wait", reason: "at the last step" });
  });

  it("halts as soon as a rate exceeds its bound with enough reports, whatever the step's age", () => {
    expect(rampDecision(ramp({ stepStartedAt: hoursAgo(1) }), { ...healthy, failureRate: { rate: 0.05, reports: 60 } }, now)).toEqual({
      kind: "halt",
      reason: "failure rate 5.0% over 60 reports exceeds 2.0%",
    });
    expect(rampDecision(ramp(), { ...healthy, crashRate: { rate: 0.5, reports: 10 } }, now)).toMatchObject({ kind: "wait" });
    expect(rampDecision(ramp(), { ...healthy, crashRate: { rate: 0.02, reports: 50 } }, now)).toMatchObject({ kind: "halt" });
  });
});
