import { invalid } from '../../domain/shared/errors';
import { MAX_PAGE_SIZE } from '../../application/ports/read-store';

/** `?limit=&cursor=` of every list route: limit 1..1000 (default 50), cursor opaque. */
export function pageQuery(query: Record<string, string | string[] | undefined>): { limit?: number; cursor?: string } {
  const limit = query.limit;
  const cursor = query.cursor;
  const result: { limit?: number; cursor?: string } = {};
  if (limit !== undefined) {
    if (typeof limit !== 'string' || !/^\d+$/.test(limit) || Number(limit) < 1 || Number(limit) > MAX_PAGE_SIZE) {
      throw invalid('invalid_limit', `limit must be an integer from 1 to ${MAX_PAGE_SIZE}`, 'limit');
    }
    result.limit = Number(limit);
  }
  if (cursor !== undefined) {
    if (typeof cursor !== 'string' || cursor.length === 0) throw invalid('invalid_cursor', 'cursor must be the next_cursor of a previous page', 'cursor');
    result.cursor = cursor;
  }
  return result;
}
