import { promisify } from "node:util";
import { gunzip } from "node:zlib";
import type { Firestore } from "firebase-admin/firestore";
import { CHANGE_FEED_LIFETIME_MS, catalogChanges, changedSince, moduleOfTopic, MODULES_TOPIC } from "../core/catalog-changes";
import { withinDeadline, withinRequestDeadline } from "../core/deadline";
import { ApiError } from "../core/errors";
import type { Logger } from "../core/logger";
import type { ObjectStore } from "../core/storage";
import type { Deps } from "../deps";
import { developerStore, type PublisherProfile, type PublisherStanding } from "../developers/developer-store";
import { downloadStore } from "./download-store";
import { ratingStore } from "./rating-store";
import { moduleStore, type ModuleRecord } from "./module-store";
import { publicPrice } from "./price";
import { decodeSnapshot, encodeSnapshot, isGzip, SNAPSHOT_PATH, UnreadableSnapshot, type CatalogSnapshot, type ListedModule } from "./catalog-snapshot";
import { newTextIndex, ratingPrior, type CatalogRatingPrior, type CatalogTextIndex, type IndexedModule, type RatingFigures } from "./ranking";

/**
 * The marketplace's search catalog on one instance (contract §18): every listed module's search
 * fields and figures, and a MiniSearch index of them, kept current by the catalog change feed
 * (§13). A change made on this instance is applied before its next search; one made elsewhere
 * within the feed's delay (about a second). Searches never read the collection.
 *
 * A cold instance loads the latest snapshot (`search/catalog.snapshot` in the bucket, written by
 * `writeSearchSnapshot`: the entries and their packed text index, see catalog-snapshot.ts), then
 * reads the modules the feed names since it was written. The search that started the load is
 * current with what that query found, which it asked after it arrived: it does not wait for the
 * feed's listener to connect as well. Every later search waits until the feed is followed.
 * Without a snapshot (a new project), or one older than the feed keeps, it reads the listed
 * modules once and says so in the log.
 */

/** Where versions before the packed snapshot wrote theirs (gzipped JSON, entries only), read while no packed one exists. */
const LEGACY_SNAPSHOT_PATH = "search/catalog.json";

const gunzipped = promisify(gunzip);

export interface SearchCatalog {
  /** The catalog, current with every change committed before this call; 503 while the feed cannot be followed. */
  current(): Promise<{ entries: ReadonlyMap<string, ListedModule>; index: CatalogTextIndex; prior: CatalogRatingPrior }>;
}

export interface SearchSources {
  db: Firestore;
  store: ObjectStore;
  logger: Logger;
  downloadShards: number;
  /** The rating figures of modules (reviews/), by id. */
  ratings(moduleIds: string[]): Promise<Map<string, RatingFigures>>;
}

const catalogs = new WeakMap<Firestore, SearchCatalog>();

/** The search catalog of the service's own stores. */
export const marketplaceSearch = (deps: Pick<Deps, "db" | "store" | "logger" | "config">) =>
  searchCatalog({ db: deps.db, store: deps.store, logger: deps.logger, downloadShards: deps.config.downloadShards, ratings: (ids) => ratingStore(deps.db).figures(ids) });

/** The instance's catalog for one Firestore client: built on first use, then kept. */
export function searchCatalog(sources: SearchSources): SearchCatalog {
  let catalog = catalogs.get(sources.db);
  if (!catalog) {
    catalog = followedCatalog(sources);
    catalogs.set(sources.db, catalog);
  }
  return catalog;
}

/** Modules read again in one pass. */
const RELOAD_BATCH = 100;

/** A module read again: as the catalog keeps it (null: no longer listed), and its description for the index. */
interface ReadModule {
  id: string;
  module: ListedModule | null;
  description: string;
}

interface CatchUp {
  /** This clock's time when the changes were asked for. */
  askedAt: Date;
  read: ReadModule[];
  /** Modules named beyond the first batch, read in the passes after. */
  unread: string[];
}

/** What the feed brings is every change committed until this long before (its delay, allowed for). */
const FEED_DELAY_MS = 2_000;

/** How long a search waits for the change feed to be followed before answering 503. */
const FEED_WAIT_MS = 5_000;

function followedCatalog(sources: SearchSources): SearchCatalog {
  const { db, logger } = sources;
  const entries = new Map<string, ListedModule>();
  let index = newTextIndex();
  /** The entries' rating prior, worked out again on the first search after they changed (null). */
  let prior: CatalogRatingPrior | null = null;
  /** The feed's time up to which this catalog has applied every change. */
  let seenUntil = 0;
  const dirty = new Set<string>();
  let applying: Promise<void> | null = null;
  let resumed = false;
  /** The catch-up from the snapshot's time, started while the snapshot decoded: the first pass after a load applies it. */
  let snapshotCatchUp: Promise<CatchUp> | null = null;
  let loading: Promise<void> | null = null;
  /** Whether the entries and index are loaded: the feed's changes are applied only to them, never before. */
  let loaded = false;

  const put = (moduleId: string, module: ListedModule | null, description: string) => {
    if (entries.has(moduleId)) index.discard(moduleId);
    entries.delete(moduleId);
    if (module) {
      entries.set(moduleId, module);
      index.add({ ...module, description });
    }
  };

  /** The named modules as they are now, with their figures. */
  const readModules = async (moduleIds: string[]): Promise<ReadModule[]> => {
    if (moduleIds.length === 0) return [];
    const [modules, ratings, downloads] = await Promise.all([
      moduleStore(db).getModules(moduleIds),
      sources.ratings(moduleIds),
      Promise.all(moduleIds.map((id) => downloadStore(db, sources.downloadShards).total(id))),
    ]);
    const publishers = await developerStore(db).profiles(modules.flatMap((module) => (module ? [module.publisherId] : [])));
    return moduleIds.map((id, i) => ({ id, module: listedModule(modules[i], publishers, downloads[i], ratings.get(id) ?? null), description: modules[i]?.description ?? "" }));
  };

  const apply = (read: ReadModule[]) => {
    for (const { id, module, description } of read) put(id, module, description);
    if (read.length > 0) prior = null;
  };

  /**
   * What changed since `since`, with the first modules it names read already: started while a
   * snapshot downloads and decodes, their reads are done by the time it is loaded.
   */
  const catchUp = async (since: Date): Promise<CatchUp> => {
    const { topics, askedAt } = await changedSince(db, since);
    const named = [...topics].flatMap((topic) => moduleOfTopic(topic) ?? []);
    return { askedAt, read: await readModules(named.slice(0, RELOAD_BATCH)), unread: named.slice(RELOAD_BATCH) };
  };

  /** Applies what is dirty (and, after a gap in the feed, what changed meanwhile), one pass at a time. */
  const applyPending = async () => {
    while (dirty.size > 0 || resumed) {
      if (resumed) {
        resumed = false;
        const pending = snapshotCatchUp ?? catchUp(new Date(seenUntil));
        snapshotCatchUp = null;
        const gap = await withinDeadline("Firestore (catalog changes)", pending).catch((error: unknown) => {
          resumed = true;
          throw error;
        });
        apply(gap.read);
        for (const id of gap.unread) dirty.add(id);
        // Less the feed's delay: a change committing while it was asked may be missing.
        seenUntil = Math.max(seenUntil, gap.askedAt.getTime() - FEED_DELAY_MS);
      }
      const batch = [...dirty].slice(0, RELOAD_BATCH);
      batch.forEach((id) => dirty.delete(id));
      apply(
        await readModules(batch).catch((error: unknown) => {
          batch.forEach((id) => dirty.add(id));
          throw error;
        }),
      );
    }
  };
  // `finally` runs after the assignment, even when there was nothing to apply.
  const settle = (): Promise<void> => (applying ??= applyPending().finally(() => (applying = null)));

  const load = async () => {
    // A load tried again after a failure starts afresh: its index must hold exactly its entries.
    loaded = false;
    entries.clear();
    const started = Date.now();
    const recent = (writtenAt: number) => Date.now() - writtenAt < CHANGE_FEED_LIFETIME_MS - 3_600_000;
    // What changed since the snapshot is asked for as soon as its first bytes tell its time, while
    // the rest downloads and decodes; asked after the search that started the load arrived, it
    // makes that search current.
    const early: { catchUp?: Promise<CatchUp> } = {};
    const snapshot = await readSnapshot(sources.store, logger, (writtenAt) => {
      if (!recent(writtenAt)) return;
      early.catchUp = catchUp(new Date(writtenAt));
      early.catchUp.catch(() => undefined);
    });
    const read = Date.now();
    if (snapshot && recent(snapshot.writtenAt)) {
      for (const module of snapshot.modules) entries.set(module.id, module);
      index = snapshot.index;
      seenUntil = snapshot.writtenAt;
      snapshotCatchUp = early.catchUp ?? null;
      resumed = true;
      loaded = true;
      logger.info("search catalog loaded from its snapshot", { modules: entries.size, format: snapshot.format, writtenAt: new Date(snapshot.writtenAt).toISOString(), readMs: read - started, ms: Date.now() - started });
    } else {
      // Once in a project's life (or after a day without snapshots): every listed module, every
      // download shard and every rating shard, each in one read.
      seenUntil = Date.now();
      const [listed, downloads] = await Promise.all([moduleStore(db).listed(), downloadStore(db, sources.downloadShards).totals()]);
      const [ratings, publishers] = await Promise.all([
        sources.ratings(listed.map((module) => module.id)),
        developerStore(db).profiles(listed.map((module) => module.publisherId)),
      ]);
      const indexed: IndexedModule[] = [];
      for (const module of listed) {
        const entry = listedModule(module, publishers, downloads.get(module.id) ?? 0, ratings.get(module.id) ?? null);
        if (!entry) continue;
        entries.set(module.id, entry);
        indexed.push({ ...entry, description: module.description ?? "" });
      }
      index = newTextIndex();
      index.addAll(indexed);
      resumed = true;
      loaded = true;
      logger.warn("search catalog built from the modules collection (no recent snapshot)", { modules: entries.size, ms: Date.now() - started });
    }
    prior = null;
    await settle();
  };

  const feed = catalogChanges(db);
  feed.subscribe((topics, news) => {
    // After a gap, the catch-up starts where the feed was last followed.
    if (news === "resumed") resumed = true;
    if (news === "followed") seenUntil = Math.max(seenUntil, Date.now() - FEED_DELAY_MS);
    for (const moduleId of topics.flatMap((topic) => moduleOfTopic(topic) ?? [])) dirty.add(moduleId);
    if (loaded && !applying) void settle().catch((error: Error) => logger.warn("search catalog could not apply a change yet", { error: error.message }));
  });

  const followed = async () => {
    const waitUntil = Date.now() + FEED_WAIT_MS;
    while (feed.stamp(MODULES_TOPIC) === null) {
      if (Date.now() > waitUntil) throw new ApiError("unavailable", "The catalog's change feed cannot be followed right now.", { headers: { "Retry-After": "5" } });
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  return {
    async current() {
      // Within the request's deadline (core/deadline.ts): a frozen Firestore is a 503, not a wait.
      await withinRequestDeadline(
        "The search catalog",
        (async () => {
          if (!loading) {
            loading = load().catch((error: unknown) => {
              loading = null;
              throw error;
            });
            // Current with the load's catch-up, asked after this search arrived: what the feed
            // brings meanwhile (its first snapshot resumes it from the catch-up's time) is for
            // the searches after.
            await loading;
            return;
          }
          await followed();
          await loading;
          while (dirty.size > 0 || resumed || applying) await settle();
        })(),
      );
      return { entries, index, prior: (prior ??= ratingPrior(entries.values())) };
    },
  };
}

/**
 * A module as the catalog keeps it, or null when it is not in the public marketplace: a business's
 * private module (§26) never enters it, so no public list, count, facet, suggestion or snapshot
 * can hold it.
 */
function listedModule(module: ModuleRecord | null, publishers: ReadonlyMap<string, PublisherStanding>, downloads: number, rating: RatingFigures | null): ListedModule | null {
  return module?.businessId === null ? catalogEntryOf(module, publishers, downloads, rating) : null;
}

/** A listed module (public or private) as catalogs keep it, or null when it has no published version. */
export function catalogEntryOf(module: ModuleRecord | null, publishers: ReadonlyMap<string, PublisherStanding>, downloads: number, rating: RatingFigures | null): ListedModule | null {
  if (!module || !module.listed || module.latestVersion === null) return null;
  // A moderation decision (§30) takes a module, or all of a suspended publisher's, out of every list; its page stays.
  if (module.restriction || publishers.get(module.publisherId)?.suspended) return null;
  return {
    id: module.id,
    name: module.name,
    summary: module.summary,
    tags: module.tags ?? [],
    category: module.category ?? null,
    publisherId: module.publisherId,
    publisher: publisherOf(publishers, module.publisherId),
    entitlement: module.entitlement ?? null,
    price: publicPrice(module.price),
    updatedAt: module.updatedAt.getTime(),
    downloads,
    rating,
    latestVersion: module.latestVersion,
    versions: module.versionSummary,
  };
}

/** A module's publisher; one whose claim is gone (an operator's cleanup) is shown by its id. */
export function publisherOf(publishers: ReadonlyMap<string, PublisherProfile>, publisherId: string): PublisherProfile {
  const found = publishers.get(publisherId);
  return found ? { id: found.id, displayName: found.displayName, verifiedDomain: found.verifiedDomain } : { id: publisherId, displayName: publisherId, verifiedDomain: null };
}

/**
 * The latest snapshot, or null when there is none this version can read (the catalog is then
 * built from the collection). `written` hears the snapshot's time before it is decoded.
 */
async function readSnapshot(store: ObjectStore, logger: Logger, written: (writtenAt: number) => void): Promise<(CatalogSnapshot & { format: "packed" | "legacy" }) | null> {
  // Unreadable is as good as absent: the collection still answers, and the next snapshot (every 30 minutes) replaces it.
  const unreadable = (error: unknown) => (logger.error("the search snapshot cannot be read", { error: (error as Error).message }), null);
  try {
    // Gzip's own CRC-32 checks the bytes.
    const snapshot = await decodeSnapshot(store.read(SNAPSHOT_PATH, { checked: false }), written);
    if (!snapshot) logger.warn("the search snapshot is of another format or other fields; the next one replaces it", { path: SNAPSHOT_PATH });
    return snapshot && { ...snapshot, format: "packed" };
  } catch (error) {
    if (error instanceof UnreadableSnapshot) return unreadable(error);
    if (!isNotFound(error)) throw error;
  }
  const legacy = await readObject(store, LEGACY_SNAPSHOT_PATH);
  try {
    const snapshot = legacy && (await legacySnapshot(legacy));
    return snapshot && { ...snapshot, format: "legacy" };
  } catch (error) {
    return unreadable(error);
  }
}

const isNotFound = (error: unknown) => (error as { code?: number }).code === 404;

async function readObject(store: ObjectStore, path: string): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of store.read(path)) chunks.push(chunk as Buffer);
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
  return Buffer.concat(chunks);
}

async function legacySnapshot(bytes: Buffer): Promise<CatalogSnapshot | null> {
  const json = isGzip(bytes) ? await gunzipped(bytes) : bytes;
  const parsed = JSON.parse(json.toString("utf8")) as { writtenAt: number; modules: (ListedModule & { description?: string })[] };
  // Snapshots written before modules named their publisher's profile are built again.
  if (parsed.modules.some((module) => !module.publisher)) return null;
  const index = newTextIndex();
  const modules = parsed.modules.map(({ description, ...module }): ListedModule => {
    const entry = {
      ...module,
      versions: module.versions.map((version) => ({ ...version, publishedAt: version.publishedAt ? new Date(version.publishedAt) : null })),
      // Snapshots written before modules had prices hold none.
      price: module.price ?? null,
    };
    index.add({ ...entry, description: description ?? "" });
    return entry;
  });
  return { writtenAt: parsed.writtenAt, modules, index };
}

/**
 * Writes the snapshot a cold instance starts from: this instance's catalog, current (the scheduled
 * `searchSnapshot` function, every 30 minutes).
 */
export async function writeSearchSnapshot(catalog: SearchCatalog, store: ObjectStore, now: Date): Promise<{ modules: number; bytes: number }> {
  const { entries, index } = await catalog.current();
  const body = await encodeSnapshot(now.getTime(), entries.values(), index);
  await store.write(SNAPSHOT_PATH, body, { contentType: "application/gzip" });
  return { modules: entries.size, bytes: body.length };
}
