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
}
