// The range of days a usage series covers: `from` and `to` as `YYYY-MM-DD`, both included,
// in UTC. Without them, the last 30 days up to today; at most 366 days, so that a year, leap
// or not, fits in one answer.

import { invalid } from '../../domain/shared/errors';

export interface DayRange {
  /** `YYYY-MM-DD`, included. */
  from: string;
  /** `YYYY-MM-DD`, included. */
  to: string;
}

export const DEFAULT_RANGE_DAYS = 30;
export const MAX_RANGE_DAYS = 366;
const DAY_MS = 86_400_000;

/** Midnight (UTC) of a `YYYY-MM-DD` that names a real calendar day; null otherwise. */
function parseDay(text: string): number | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!match) return null;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const at = Date.UTC(year, month - 1, day);
  // Date.UTC rolls 2026-02-30 over into March: a day that does not exist reads back differently.
  return new Date(at).toISOString().slice(0, 10) === text ? at : null;
}

const dayText = (at: number): string => new Date(at).toISOString().slice(0, 10);

function dayOf(field: 'from' | 'to', text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const at = parseDay(text);
  if (at === null) throw invalid('invalid_request', `${field}: expected a calendar day as YYYY-MM-DD`, field);
  return at;
}

/**
 * The range a request asks for, checked: 400 `invalid_request` naming `from` or `to` for a
 * day that is not `YYYY-MM-DD`, and naming `from` when it comes after `to` or the range is
 * longer than MAX_RANGE_DAYS. `to` defaults to today (UTC), `from` to 29 days before `to`.
 */
export function dayRange(query: { from?: string; to?: string }, now: Date): DayRange {
  const requestedFrom = dayOf('from', query.from);
  const to = dayOf('to', query.to) ?? Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const from = requestedFrom ?? to - (DEFAULT_RANGE_DAYS - 1) * DAY_MS;
  if (from > to) throw invalid('invalid_request', `from: ${dayText(from)} is after to (${dayText(to)})`, 'from');
  const days = (to - from) / DAY_MS + 1;
  if (days > MAX_RANGE_DAYS) throw invalid('invalid_request', `from: the range is ${days} days; at most ${MAX_RANGE_DAYS} are answered at once`, 'from');
  return { from: dayText(from), to: dayText(to) };
}

/** Every day of the range, in order. */
export function daysOf(range: DayRange): string[] {
  const days: string[] = [];
  for (let at = parseDay(range.from) as number, end = parseDay(range.to) as number; at <= end; at += DAY_MS) days.push(dayText(at));
  return days;
}

/** The range from the first day of `now`'s calendar month (UTC) to today. */
export function monthToDate(now: Date): DayRange {
  return { from: dayText(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)), to: dayText(now.getTime()) };
}
