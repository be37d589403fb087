import type { Request } from "express";
import { clientKey, WindowCounter } from "./rate-limit";

describe("WindowCounter", () => {
  let time = 1_000_000;
  const clock = () => time;

  it("counts a key's hits in a window that starts at its first hit, then starts again", () => {
    const counter = new WindowCounter(60_000, clock);
    expect(counter.hit("a")).toEqual({ hits: 1, endsAt: time + 60_000 });
    time += 30_000;
    expect(counter.hit("a").hits).toBe(2);
    expect(counter.hit("b")).toEqual({ hits: 1, endsAt: time + 60_000 });
    time += 29_999;
    expect(counter.hit("a").hits).toBe(3);
    time += 1;
    expect(counter.hit("a")).toEqual({ hits: 1, endsAt: time + 60_000 });
    expect(counter.hit("b").hits).toBe(2);
  });

  it("keeps a key's count across a rotation and forgets keys idle for two windows", () => {
    const counter = new WindowCounter(60_000, clock);
    time += 10_000;
    counter.hit("steady");
    counter.hit("idle");
    time += 50_000;
    // The maps rotate here; "steady" is still inside its window and keeps its count.
    expect(counter.hit("steady").hits).toBe(2);
    expect(counter.size).toBe(2);
    time += 60_000;
    expect(counter.hit("steady").hits).toBe(1);
    expect(counter.size).toBe(1);
  });
});

describe("clientKey", () => {
  const request = (ip: string) => ({ ip, socket: {} }) as unknown as Request;

  it("keys an IPv4 address by itself and an IPv6 address by its /56 network", () => {
    expect(clientKey(request("203.0.113.7"))).toBe("203.0.113.7");
    expect(clientKey(request("2001:db8:1:2ff:aaaa::1"))).toBe(clientKey(request("2001:db8:1:200::9")));
    expect(clientKey(request("2001:db8:1:2ff::1"))).not.toBe(clientKey(request("2001:db8:1:300::1")));
    expect(clientKey(request("::ffff:203.0.113.7"))).toBe("203.0.113.7");
  });
});
