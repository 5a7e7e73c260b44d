// ETag and If-Match for single resources: a read sends the resource's version as a strong
// entity tag, and an update takes the tag the client saw back in If-Match, so the write is
// refused with 412 `revision_mismatch` when another one came first (no lost update).

import type { Context } from 'koa';
import type { Versioned, WritePreconditions } from '../../application/shared/versions';
import { invalid } from '../../domain/shared/errors';

/** One entity tag, strong (`"3"`) or weak (`W/"3"`), as RFC 9110 writes it. */
const ENTITY_TAG = /^(W\/)?"([\x21\x23-\x7e]*)"$/;

/** Sends `value` as the body with its version as the ETag. */
export function answerVersioned<T>(ctx: Context, versioned: Versioned<T>): void {
  ctx.set('ETag', `"${versioned.version}"`);
  ctx.body = versioned.value;
}

/**
 * The precondition of an update from its If-Match header. None, or `*` (the resource exists,
 * which every update checks anyway), leaves the write unconditional. A weak tag never matches
 * under If-Match's strong comparison, so it is passed on as a version no resource has (412).
 * Anything else, a list of tags included, is 400: we send one tag and expect it back.
 */
export function preconditionsOf(ctx: Context): WritePreconditions {
  const header = ctx.get('if-match').trim();
  if (ctx.headers['if-match'] === undefined || header === '*') return {};
  const tag = ENTITY_TAG.exec(header);
  if (!tag) throw invalid('invalid_request', 'If-Match: expected one entity tag as the ETag header gave it (for example "3"), or *', 'If-Match');
  return { expectedVersion: tag[1] ? header : tag[2] };
}
