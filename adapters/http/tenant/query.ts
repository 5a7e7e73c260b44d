// Query parameters of the tenant routes: each given at most once, 400 naming it otherwise.

import { invalid } from '../../../domain/shared/errors';

export type Query = Record<string, string | string[] | undefined>;

export function single(query: Query, name: string): string | undefined {
  const value = query[name];
  if (value === undefined || typeof value === 'string') return value;
  throw invalid('invalid_request', `${name}: give it once`, name);
}

export function oneOf<T extends string>(query: Query, name: string, allowed: readonly T[]): T | undefined {
  const value = single(query, name);
  if (value === undefined) return undefined;
  if (!allowed.some((known) => known === value)) throw invalid('invalid_request', `${name}: expected one of ${allowed.join(', ')}`, name);
  return value as T;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * A time bound: an ISO 8601 time, or a calendar day (UTC) standing for its first instant
 * (`from`) or its last (`to`), so `from=2026-03-01&to=2026-03-31` is all of March.
 */
export function timeBound(query: Query, name: 'from' | 'to'): string | undefined {
  const value = single(query, name);
  if (value === undefined) return undefined;
  const at = Date.parse(value);
  if (Number.isNaN(at)) throw invalid('invalid_request', `${name}: expected an ISO 8601 time or a day as YYYY-MM-DD`, name);
  return DAY.test(value) && name === 'to' ? new Date(at + 86_400_000 - 1).toISOString() : new Date(at).toISOString();
}
