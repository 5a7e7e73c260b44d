// An in-process cache of read-model query results for the embedded store. Every write this
// process makes to a collection invalidates that collection's entries at once (the version
// bump), so a revoked session is refused on the very next request. Writes made by another
// process (the operator CLI) become visible within `ttlMs`. The cache hands out the values
// it keeps: the store copies documents before they leave it, so no caller shares an object.

/** A loaded value and its approximate size in bytes. */
export interface Loaded<V> {
  value: V;
  bytes: number;
}

interface Entry {
  version: number;
  storedAt: number;
  value: unknown;
  bytes: number;
}

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
  read<V>(collection: string, key: string, load: () => Loaded<V>): V {
    if (!this.enabled) return load().value;
    const version = this.versions.get(collection) ?? 0;
    const now = this.now();
    const entry = this.entries.get(key);
    if (entry && entry.version === version && now - entry.storedAt < this.ttlMs) return entry.value as V;
    const { value, bytes } = load();
    this.remove(key);
    if (bytes > this.maxBytes / 16) return value; // too large to be worth keeping
    this.entries.set(key, { version, storedAt: now, value, bytes });
    this.bytes += bytes;
    while (this.entries.size > this.maxEntries || this.bytes > this.maxBytes) this.remove(this.entries.keys().next().value as string);
    return value;
  }

  private remove(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.bytes -= entry.bytes;
    this.entries.delete(key);
  }
}
