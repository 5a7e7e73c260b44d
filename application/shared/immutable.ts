// Recorded events are facts: once read they are shared, not copied, by everyone who reads them
// again (the embedded event store parses a row once; decoding is done once per event). They
// are frozen so that a reader that tried to change one would fail at once, loudly (modules are
// strict), instead of changing what every other reader sees.

/** Freezes `value` and everything it holds; returns it. */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  return value;
}
