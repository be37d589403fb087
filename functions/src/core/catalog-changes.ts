import { FieldValue, Timestamp, type Firestore, type Transaction, type WriteBatch } from "firebase-admin/firestore";
import { keptListener } from "./listeners";
import { memo } from "./memo";
import { DAY_MS } from "./time";

/**
 * `catalogChanges/{autoId}`: a small change feed of the catalog (contract §13). Every service
 * write that changes what the catalog answers adds one entry, in the same batch or transaction as
 * the change itself, naming the topics it touched. Each instance follows the feed with one
 * Firestore listener and moves a stamp per topic; what an instance keeps in memory is tagged
 * with the stamp it was loaded under and is served only while that stamp is current and the
 * listener is live. The instance that wrote moves its stamps at once, after its commit.
 *
 * Cost: one document write per change, and one document read per change on every instance
 * following the feed. Entries expire after a day (a TTL policy on `expireAt`).
 */

/** Topics: every module listing at once, or one module with its versions. */
export const MODULES_TOPIC = "modules";
const MODULE_TOPIC_PREFIX = "module:";
export const moduleTopic = (moduleId: string) => `${MODULE_TOPIC_PREFIX}${moduleId}`;
/** The module a topic names, or null for a topic of another kind. */
export const moduleOfTopic = (topic: string): string | null => (topic.startsWith(MODULE_TOPIC_PREFIX) ? topic.slice(MODULE_TOPIC_PREFIX.length) : null);
/** What a change of one module (its document or a version) touches. */
export const moduleChange = (moduleId: string) => [MODULES_TOPIC, moduleTopic(moduleId)];

const COLLECTION = "catalogChanges";
const ENTRY_LIFETIME_MS = DAY_MS;
/** Entries written this long before a listener starts are still read, for clocks that differ. */
const CLOCK_MARGIN_MS = 60_000;
const MAX_TRACKED_TOPICS = 10_000;

export interface CatalogChanges {
  /** Adds an entry for these topics to a batch or transaction (before it commits). */
  record(writer: WriteBatch | Transaction, topics: string[]): void;
  /** This instance committed a change of these topics: its own memory follows at once. */
  applied(topics: string[]): void;
  /**
   * The stamp of a topic now, or null while the feed is not followed (before the listener's first
   * snapshot, after it failed): then nothing kept in memory may be served.
   */
  stamp(topic: string): number | null;
  /**
   * Calls `listener` with the topics of every change as this instance learns of it, and how.
   */
  subscribe(listener: (topics: string[], news: FeedNews) => void): void;
}

/**
 * How a change reached this instance: its own commit; the feed's listener, which had followed
 * every change until then; or the listener's first snapshot after a gap (or ever), before which
 * changes were not seen (`changedSince` finds them).
 */
export type FeedNews = "own" | "followed" | "resumed";

const feeds = new WeakMap<Firestore, CatalogChanges>();

/**
 * The change feed of one Firestore client: one listener for the whole instance, however many apps
 * are built on it. The listener starts on the first `stamp` call.
 */
export function catalogChanges(db: Firestore): CatalogChanges {
  let feed = feeds.get(db);
  if (!feed) {
    feed = followedFeed(db);
    feeds.set(db, feed);
  }
  return feed;
}

function followedFeed(db: Firestore): CatalogChanges {
  const collection = db.collection(COLLECTION);
  let sequence = 0;
  const stamps = new Map<string, number>();
  // Every stamp is at least this: moving it forgets everything kept (a restart may have missed changes).
  let floor = 0;
  let live = false;
  const subscribers: ((topics: string[], news: FeedNews) => void)[] = [];

  const move = (topics: string[], news: FeedNews) => {
    sequence += 1;
    // Whatever was kept before the listener's first snapshot is not trusted (nor, when too many
    // topics are tracked, what their stamps no longer tell).
    if (news === "resumed" || stamps.size > MAX_TRACKED_TOPICS) {
      stamps.clear();
      floor = sequence;
    }
    for (const topic of topics) stamps.set(topic, sequence);
    for (const subscriber of subscribers) subscriber(topics, news);
  };

  const listener = keptListener(
    (failed) =>
      collection.where("at", ">", Timestamp.fromMillis(Date.now() - CLOCK_MARGIN_MS)).onSnapshot((snapshot) => {
        const changed = snapshot.docChanges().filter((change) => change.type !== "removed");
        const news = live ? "followed" : "resumed";
        live = true;
        move(changed.flatMap((change) => topicsOf(change.doc.get("topics"))), news);
      }, failed),
    () => (live = false),
  );

  return {
    record(writer, topics) {
      (writer as WriteBatch).create(collection.doc(), {
        topics,
        at: FieldValue.serverTimestamp(),
        expireAt: Timestamp.fromMillis(Date.now() + ENTRY_LIFETIME_MS),
      });
    },
    applied(topics) {
      move(topics, "own");
    },
    stamp(topic) {
      listener.ensure();
      if (!live) return null;
      return Math.max(stamps.get(topic) ?? 0, floor);
    },
    subscribe(subscriber) {
      subscribers.push(subscriber);
      listener.ensure();
    },
  };
}

/**
 * The topics of the changes recorded after `since` (by the writers' clocks, less a margin for
 * clocks that differ) and `askedAt`, this clock's time when they were asked for: every change
 * committed before then is among them. How a follower that was away catches up. Reads one
 * document per change; entries live a day.
 */
export async function changedSince(db: Firestore, since: Date): Promise<{ topics: Set<string>; askedAt: Date }> {
  const askedAt = new Date();
  const snapshot = await db
    .collection(COLLECTION)
    .where("at", ">", Timestamp.fromMillis(since.getTime() - CLOCK_MARGIN_MS))
    .get();
  return { topics: new Set(snapshot.docs.flatMap((doc) => topicsOf(doc.get("topics")))), askedAt };
}

/** How long an entry of the feed is kept: a follower away longer must start over. */
export const CHANGE_FEED_LIFETIME_MS = ENTRY_LIFETIME_MS;

function topicsOf(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((topic): topic is string => typeof topic === "string") : [];
}

/** Catalog data kept in an instance's memory: current with the feed, and never older than `ttlMs`. */
export interface CatalogCache<V> {
  get(key: string, topic: string, load: () => Promise<V>): Promise<V>;
}

/** Built on first use: declaring the routes touches no backend. */
export function catalogCache<V>(db: Firestore, options: { ttlMs: number; maxEntries: number }): CatalogCache<V> {
  const kept = memo<V>(options);
  return {
    get(key, topic, load) {
      if (options.ttlMs <= 0) return load();
      const stamp = catalogChanges(db).stamp(topic);
      return stamp === null ? load() : kept.get(key, load, stamp);
    },
  };
}
