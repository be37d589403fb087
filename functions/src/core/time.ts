/** One day in milliseconds: the unit of grace periods, lifetimes and statistics ranges. */
export const DAY_MS = 24 * 60 * 60 * 1000;

/** The UTC day of a time, YYYY-MM-DD: the unit of download statistics. */
export const utcDay = (at: Date) => at.toISOString().slice(0, 10);
