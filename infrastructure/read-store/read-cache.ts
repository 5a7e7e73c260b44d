// An in-process cache of read-model query results for the embedded store. Every write this
// process makes to a collection invalidates that collection's queries at once, so a revoked
// session is refused on the very next request; the written document itself is kept as the
// answer to reads of its id (`wrote`), so a document read right after it was written (a
// projection's next event for it, a patch) is not read and parsed again: in a collection
// this process has read by id, that is. A collection only ever listed (the audit log) keeps
// none of its writes, which would cost a copy each and push out what is read. Writes made by
// another process (the operator CLI) become visible within `ttlMs`. The cache hands out the
// values it keeps: the store copies documents before they leave it, so no caller shares an
// object, unless the caller asks for a shared read (FindOptions.shared): then it gets the
// kept documents themselves, deep-frozen.
//
// One LRU cache (lru-cache) bounded by entry count and by total size holds every
// collection. Invalidating a collection moves it to a new generation instead of looking
// for its entries: an entry of an older generation is never served, and falls out of the
// cache as newer entries push it out (or is replaced on the next read of its key). Reads by
// id and queries have a generation each, so that a write moves only the queries'.

import { LRUCache } from 'lru-cache';

/** A loaded value and its approximate size in bytes. */
export interface Loaded<V> {
  value: V;
  bytes: number;
}

export type ReadKind = 'get' | 'find';

interface Entry {
  generation: number;
  value: unknown;
}

export class ReadCache {
  private readonly entries: LRUCache<string, Entry> | undefined;
  /** Per collection and kind, the generation its current entries carry: queries' bumped by every write, reads by id's by `invalidate`. */
  private readonly generations = new Map<string, number>();

  /** Bounded by entry count and by total size; a full cache lets go of the least recently used entries first. */
  constructor(
    ttlMs: number,
    maxEntries = 10_000,
    maxBytes = 64 * 1024 * 1024,
    now: () => number = Date.now,
  ) {
    this.entries =
      ttlMs > 0
        ? new LRUCache<string, Entry>({
            max: maxEntries,
            maxSize: maxBytes,
            // A value too large to be worth keeping is loaded and handed out, not kept.
            maxEntrySize: Math.floor(maxBytes / 16),
            ttl: ttlMs,
            // The store's clock, read on every check, so the TTL is exact.
            perf: { now },
            ttlResolution: 0,
          })
        : undefined;
  }

  get enabled(): boolean {
    return this.entries !== undefined;
  }

  /** Forgets every entry of the collection. */
  invalidate(collection: string): void {
    if (this.entries === undefined) return;
    this.bump(generationKey(collection, 'get'));
    this.bump(generationKey(collection, 'find'));
  }

  /**
   * A document of the collection was written (null: deleted): its queries are forgotten, and,
   * once the collection has been read by id, `value()` answers reads of `id` from now on.
   * `value()` must give what a read would load (a JSON copy, owned by the cache); it is not
   * called for a collection never read by id, which has no entry to replace.
   */
  wrote(collection: string, id: string, value: () => unknown, bytes: number): void {
    if (this.entries === undefined) return;
    this.bump(generationKey(collection, 'find'));
    const generation = this.generations.get(generationKey(collection, 'get'));
    if (generation === undefined) return;
    this.entries.set(entryKey(collection, 'get', id), { generation, value: value() }, { size: Math.max(1, Math.ceil(bytes)) });
  }

  private bump(key: string): void {
    const generation = this.generations.get(key);
    if (generation !== undefined) this.generations.set(key, generation + 1);
  }

  private generationOf(key: string): number {
    let generation = this.generations.get(key);
    if (generation === undefined) {
      generation = 0;
      this.generations.set(key, generation);
    }
    return generation;
  }

  invalidateAll(): void {
    this.entries?.clear();
  }

  /** The cached value of `key`, or `load()`'s, remembered until the collection changes. */
  read<V>(collection: string, kind: ReadKind, key: string, load: () => Loaded<V>): V {
    if (this.entries === undefined) return load().value;
    const generation = this.generationOf(generationKey(collection, kind));
    const cacheKey = entryKey(collection, kind, key);
    const entry = this.entries.get(cacheKey);
    if (entry !== undefined && entry.generation === generation) return entry.value as V;
    const { value, bytes } = load();
    this.entries.set(cacheKey, { generation, value }, { size: Math.max(1, Math.ceil(bytes)) });
    return value;
  }
}

// Collection names carry no NUL, so no two (collection, kind, key) share a cache key.
const entryKey = (collection: string, kind: ReadKind, key: string): string => `${kind}\u0000${collection}\u0000${key}`;
const generationKey = (collection: string, kind: ReadKind): string => `${kind}\u0000${collection}`;
