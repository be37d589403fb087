import { keptListener, stopListeners } from "./listeners";

describe("keptListener", () => {
  afterEach(() => jest.useRealTimers());

  it("starts once on the next turn, starts again a second after a failure (not before), and stops with stopListeners", () => {
    jest.useFakeTimers({ now: 0 });
    const fail: (() => void)[] = [];
    const stopped: number[] = [];
    const failures = jest.fn();
    let started = 0;
    const listener = keptListener((failed) => {
      const id = ++started;
      fail.push(failed);
      return () => stopped.push(id);
    }, failures);
    listener.ensure();
    listener.ensure();
    expect(started).toBe(0);
    jest.runOnlyPendingTimers();
    expect(started).toBe(1);
    fail[0]();
    expect(failures).toHaveBeenCalledTimes(1);
    jest.setSystemTime(999);
    listener.ensure();
    jest.runOnlyPendingTimers();
    expect(started).toBe(1);
    jest.setSystemTime(1_000);
    listener.ensure();
    jest.runOnlyPendingTimers();
    expect(started).toBe(2);
    stopListeners();
    // The failed listener is not stopped again; the running one is.
    expect(stopped).toEqual([2]);
  });

  it("is not opened when stopped before its turn", () => {
    jest.useFakeTimers({ now: 0 });
    let started = 0;
    keptListener(() => {
      started += 1;
      return () => undefined;
    }, jest.fn()).ensure();
    stopListeners();
    jest.runOnlyPendingTimers();
    expect(started).toBe(0);
  });
});
