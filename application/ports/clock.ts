/** The one clock: injected everywhere so tests can hold time still. */
export interface Clock {
  now(): Date;
}

/** The one id generator. */
export interface IdGenerator {
  newId(): string;
}
