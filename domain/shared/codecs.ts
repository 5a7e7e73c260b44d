// io-ts building blocks shared by the aggregates' event and command codecs.

import * as t from 'io-ts';

export interface NonEmptyTrimmedBrand {
  readonly NonEmptyTrimmed: unique symbol;
}

/** A string with no surrounding spaces and at least one character. */
export const NonEmptyTrimmed = t.brand(
  t.string,
  (value): value is t.Branded<string, NonEmptyTrimmedBrand> => value.length > 0 && value.trim() === value,
  'NonEmptyTrimmed',
);

export const IsoDateTime = t.refinement(t.string, (value) => !Number.isNaN(Date.parse(value)), 'IsoDateTime');

