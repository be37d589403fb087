/** One day in milliseconds: the unit of grace periods, lifetimes and statistics ranges. */
export const DAY_MS = 24 * 60 * 60 * 1000;

/** The UTC day of a time, YYYY-MM-DD: the unit of download statistics. */
export const utcDay = (at: Date) => at.toISOString().slice(0, 10);

/** The first and last instants a Firestore timestamp holds (years 1 to 9999). */
const FIRST_STORABLE_MS = Date.parse("0001-01-01T00:00:00Z");
const LAST_STORABLE_MS = Date.parse("9999-12-31T23:59:59.999Z");

/** A query bound brought within what Firestore stores: nothing lies outside, so no answer changes. */
export const storableInstant = (ms: number) => new Date(Math.min(LAST_STORABLE_MS, Math.max(FIRST_STORABLE_MS, ms)));
