// Every document a query finds, page by page: for the few use cases that must see all of them
// (an end user's erasure and export), not for lists, which answer one page and a cursor.

import type { Collection, Document, FindOptions } from '../ports/read-store';

const PAGE = 500;

/** The documents `query` finds, up to `max` (all of them by default), and whether there were more. */
export async function everyDocument<Doc extends Document>(collection: Collection<Doc>, query: Omit<FindOptions, 'limit' | 'cursor'>, max = Number.MAX_SAFE_INTEGER): Promise<{ docs: Doc[]; more: boolean }> {
  const docs: Doc[] = [];
  let cursor: string | undefined;
  do {
    const page = await collection.find({ ...query, limit: PAGE, ...(cursor ? { cursor } : {}) });
    docs.push(...page.items);
    cursor = page.next_cursor ?? undefined;
  } while (cursor && docs.length < max);
  return { docs: docs.slice(0, max), more: docs.length > max || cursor !== undefined };
}
