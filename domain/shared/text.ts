// The one rule for human text that enters the domain (names, titles, display names, and the
// longer texts next to them): what is stored is the NFC form, trimmed, and it holds no
// character that could hide or disguise what a reader sees.
//
// - NFC, so composed and decomposed spellings of one name are one name (reservations, uniqueness).
// - Lone surrogates are refused: they cannot be stored as UTF-8 without loss.
// - C0 and C1 control characters are refused (U+0000-U+001F, U+007F-U+009F); multi-line text
//   keeps tab, line feed and carriage return. Single-line text also refuses the Unicode line
//   and paragraph separators (U+2028, U+2029).
// - Bidi embedding, override and isolate characters (U+202A-U+202E, U+2066-U+2069) are refused:
//   they reorder what follows them, so "exe.txt" can display as "txt.exe".
// - Lengths count characters (code points) of the stored form, not UTF-16 units.

import { type Either, left, right } from 'fp-ts/Either';
import { type DomainError, invalid } from './errors';

export interface TextRules {
  /** Fewest characters once trimmed (default 1). */
  min?: number;
  /** Most characters once trimmed. */
  max: number;
  /** Whether tab, line feed and carriage return are allowed (default false). */
  multiline?: boolean;
  /** The error code (default `invalid_request`); aggregates keep their own, such as `invalid_name`. */
  code?: string;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const SINGLE_LINE_FORBIDDEN = /[\u0000-\u001F\u007F-\u009F\u2028\u2029\u202A-\u202E\u2066-\u2069]/;
const MULTI_LINE_FORBIDDEN = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]/;

/** The number of characters (code points) of a string. */
export function characterCount(value: string): number {
  let count = 0;
  for (const _character of value) count += 1;
  return count;
}

/** The stored form of `value` as `field`, or a 400 naming the field and what is wrong. */
export function checkText(field: string, value: string, rules: TextRules): Either<DomainError, string> {
  const code = rules.code ?? 'invalid_request';
  const min = rules.min ?? 1;
  if (LONE_SURROGATE.test(value)) return left(invalid(code, `${field} contains a lone surrogate (not valid Unicode text)`, field));
  const normalized = value.normalize('NFC').trim();
  const forbidden = (rules.multiline ? MULTI_LINE_FORBIDDEN : SINGLE_LINE_FORBIDDEN).exec(normalized);
  if (forbidden) {
    const codePoint = `U+${forbidden[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
    const what = /[\u202A-\u202E\u2066-\u2069]/.test(forbidden[0])
      ? 'a bidirectional override character'
      : /[\u2028\u2029]/.test(forbidden[0])
        ? 'a line separator'
        : 'a control character';
    return left(invalid(code, `${field} must not contain ${what} (${codePoint})`, field));
  }
  const length = characterCount(normalized);
  if (length < min || length > rules.max) {
    const range = min === 0 ? `at most ${rules.max}` : min === rules.max ? `exactly ${min}` : `${min} to ${rules.max}`;
    return left(invalid(code, `${field} must be ${range} characters`, field));
  }
  return right(normalized);
}

/** Why `value` is refused as `field`, or null when it is acceptable (its stored form is `normalizeText`). */
export function textProblem(field: string, value: string, rules: TextRules): DomainError | null {
  const checked = checkText(field, value, rules);
  return checked._tag === 'Left' ? checked.left : null;
}

/** The stored form of text that passed `checkText`: NFC, trimmed. */
export const normalizeText = (value: string): string => value.normalize('NFC').trim();

/**
 * A text from elsewhere (a document's extracted text) made one that checkText takes as a
 * multi-line text: each character it refuses becomes a space, and a lone surrogate (half of a
 * character cut in two) is dropped.
 */
export const storableMultiLineText = (value: string): string => value.replace(new RegExp(MULTI_LINE_FORBIDDEN.source, 'g'), ' ').replace(new RegExp(LONE_SURROGATE.source, 'g'), '');
