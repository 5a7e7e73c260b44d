// An in-process cache of read-model query results for the embedded store. Every write this
// process makes to a collection drops that collection's entries at once, so a revoked
// session is refused on the very next request. Writes made by another process (the
// operator CLI) become visible within `ttlMs`. The cache hands out the values it keeps: the
// store copies documents before they leave it, so no caller shares an object.
//
// Entries are kept per collection and per kind of read, keyed by the document id or the
// query's key alone: a lookup then hashes a string the caller already has (often the very
// same string object on every request) instead of a new concatenation.

/** A loaded value and its approximate size in bytes. */
export interface Loaded<V> {
  value: V;
  bytes: number;
}

export type ReadKind = 'get' | 'find';

interface Entry {
  storedAt: number;
  value: unknown;
  bytes: number;
}

/** One collection's entries. */
class Shelf {
  readonly get = new Map<string, Entry>();
  readonly find = new Map<string, Entry>();
  bytes = 0;

  get size(): number {
    return this.get.size + this.find.size;
  }
}

export class ReadCache {
  private readonly shelves = new Map<string, Shelf>();
  private entries = 0;
  private bytes = 0;

  /** Bounded by entry count and by total size; a full cache lets go of old entries first. */
  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
    private readonly maxBytes = 64 * 1024 * 1024,
    private readonly now: () => number = Date.now,
  ) {}

  get enabled(): boolean {
    return this.ttlMs > 0;
  }

  invalidate(collection: string): void {
    const shelf = this.shelves.get(collection);
    if (!shelf) return;
    this.shelves.delete(collection);
    this.entries -= shelf.size;
    this.bytes -= shelf.bytes;
  }

  invalidateAll(): void {
    this.shelves.clear();
    this.entries = 0;
    this.bytes = 0;
  }

  /** The cached value of `key`, or `load()`'s, remembered until the collection changes. */
  read<V>(collection: string, kind: ReadKind, key: string, load: () => Loaded<V>): V {
    if (!this.enabled) return load().value;
    const now = this.now();
    let shelf = this.shelves.get(collection);
    const entry = shelf?.[kind].get(key);
    if (entry && now - entry.storedAt < this.ttlMs) return entry.value as V;
    const { value, bytes } = load();
    if (!shelf) {
      shelf = new Shelf();
      this.shelves.set(collection, shelf);
    }
    this.remove(shelf, shelf[kind], key);
    if (bytes > this.maxBytes / 16) return value; // too large to be worth keeping
    shelf[kind].set(key, { storedAt: now, value, bytes });
    shelf.bytes += bytes;
    this.entries += 1;
    this.bytes += bytes;
    while ((this.entries > this.maxEntries || this.bytes > this.maxBytes) && this.evictOne());
    return value;
  }

  /** Lets go of the oldest entry of the collection cached longest ago (Maps keep insertion order). */
  private evictOne(): boolean {
    for (const [collection, shelf] of this.shelves) {
      for (const entries of [shelf.get, shelf.find]) {
        const oldest = entries.keys().next();
        if (!oldest.done) {
          this.remove(shelf, entries, oldest.value);
          return true;
        }
      }
      this.shelves.delete(collection);
    }
    return false;
  }

  private remove(shelf: Shelf, entries: Map<string, Entry>, key: string): void {
    const entry = entries.get(key);
    if (!entry) return;
    entries.delete(key);
    shelf.bytes -= entry.bytes;
    this.entries -= 1;
    this.bytes -= entry.bytes;
  }
}
