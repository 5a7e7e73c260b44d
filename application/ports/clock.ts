/** The one clock: injected everywhere so tests can hold time still. */
export interface Clock {
  now(): Date;
}

/** The one id generator. */
export interface IdGenerator {
  newId(): string;
  /**
   * The id a key stands for: the same key gives the same id in every process, so a retried
   * request or a redelivered event recreates the ids it created the first time.
   */
  fromKey(key: string): string;
  /**
   * The id a key stands for, placed in time where `after` is: when `after` is one of
   * `newId`'s (it carries the millisecond it was made), the id carries the same millisecond,
   * so ids made from keys for what follows `after` land beside it in every index that holds
   * them; otherwise `fromKey(key)`. The same key and `after` give the same id in every process.
   */
  fromKeyAt(key: string, after: string): string;
}
