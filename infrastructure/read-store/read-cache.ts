// An in-process cache of read-model query results for the embedded store. Every write this
// process makes to a collection invalidates that collection's entries at once (the version
// bump), so a revoked session is refused on the very next request. Writes made by another
// process (the operator CLI) become visible within `ttlMs`. Entries hold the documents' JSON
// text, parsed on every read, so callers never share an object.

interface Entry {
  version: number;
  storedAt: number;
  value: string | null | string[];
  /** Approximate size in bytes (UTF-16 characters x 2). */
  size: number;
}

const sizeOf = (value: string | null | string[]): number =>
  value === null ? 16 : typeof value === 'string' ? value.length * 2 : value.reduce((total, text) => total + text.length * 2, 16);

export class ReadCache {
  private readonly versions = new Map<string, number>();
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;

  /** Bounded by entry count and by total size, least recently stored first out. */
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
    this.versions.set(collection, (this.versions.get(collection) ?? 0) + 1);
  }

  invalidateAll(): void {
    for (const collection of this.versions.keys()) this.invalidate(collection);
    this.entries.clear();
    this.bytes = 0;
  }

  /** The cached value of `key`, or `load()`'s, remembered for the collection's current version. */
  read<V extends string | null | string[]>(collection: string, key: string, load: () => V): V {
    if (!this.enabled) return load();
    const version = this.versions.get(collection) ?? 0;
    const now = this.now();
    const entry = this.entries.get(key);
    if (entry && entry.version === version && now - entry.storedAt < this.ttlMs) return entry.value as V;
    const value = load();
    this.remove(key);
    const size = sizeOf(value);
    if (size > this.maxBytes / 16) return value; // too large to be worth keeping
    this.entries.set(key, { version, storedAt: now, value, size });
    this.bytes += size;
    while (this.entries.size > this.maxEntries || this.bytes > this.maxBytes) this.remove(this.entries.keys().next().value as string);
    return value;
  }

  private remove(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.bytes -= entry.size;
    this.entries.delete(key);
  }
}
