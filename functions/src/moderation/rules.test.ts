import { appealOpenUntil, countBy, dayRange, median } from "./rules";

describe("moderation rules", () => {
  test("an appeal stays open six calendar months, to the month's last day when it has no such date", () => {
    expect(appealOpenUntil(new Date("2026-01-15T10:00:00Z")).toISOString()).toBe("2026-07-15T10:00:00.000Z");
    expect(appealOpenUntil(new Date("2026-08-31T10:00:00Z")).toISOString()).toBe("2027-02-28T10:00:00.000Z");
    expect(appealOpenUntil(new Date("2027-08-31T00:00:00Z")).toISOString()).toBe("2028-02-29T00:00:00.000Z");
  });

  test("median of none, odd and even counts", () => {
    expect(median([])).toBeNull();
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });

  test("counts name every word, and ignore words not in the list", () => {
    expect(countBy(["a", "b", "c"] as const, ["a", "c", "a", "x" as "a"])).toEqual({ a: 2, b: 0, c: 1 });
  });

  test("a day range holds both days whole", () => {
    const { start, end } = dayRange("2026-11-01", "2026-11-30");
    expect(start.toISOString()).toBe("2026-11-01T00:00:00.000Z");
    expect(end.toISOString()).toBe("2026-12-01T00:00:00.000Z");
  });
});
