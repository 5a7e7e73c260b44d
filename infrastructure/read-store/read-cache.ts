// An in-process cache of read-model query results for the embedded store. Every write this
// process makes to a collection invalidates that collection's entries at once (the version
// bump), so a revoked session is refused on the very next request. Writes made by another
// process (the operator CLI) become visible within `ttlMs`. Entries hold the documents' JSON
// text, parsed on every read, so callers never share an object.

interface Entry {
  version: number;
  storedAt: number;
  value: string | null | string[];
}

export class ReadCache {
  private readonly versions = new Map<string, number>();
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  get enabled(): boolean {
    return this.ttlMs > 0;
  }

  invalidate(collection: string): void {
    this.versions.set(collection, (this.versions.get(collection) ?? 0) + 1);
  }

  invalidateAll(): void {
    for (const collection of this.versions.keys()) this.invalidate(collection);
    this.entries.clear();
  }

  /** The cached value of `key`, or `load()`'s, remembered for the collection's current version. */
  read<V extends string | null | string[]>(collection: string, key: string, load: () => V): V {
    if (!this.enabled) return load();
    const version = this.versions.get(collection) ?? 0;
    const now = Date.now();
    const entry = this.entries.get(key);
    if (entry && entry.version === version && now - entry.storedAt < this.ttlMs) return entry.value as V;
    const value = load();
    this.entries.delete(key);
    this.entries.set(key, { version, storedAt: now, value });
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    return value;
  }
}
