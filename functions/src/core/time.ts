/** One day in milliseconds: the unit of grace periods, lifetimes and statistics ranges. */
export const DAY_MS = 24 * 60 * 60 * 1000;
