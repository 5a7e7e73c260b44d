// Request bodies decoded with io-ts: a bad body is 400 `invalid_request` naming the field.

import * as t from 'io-ts';
import { isLeft } from 'fp-ts/Either';
import { invalid } from '../../domain/shared/errors';

/** `a.b` for a nested field; union and intersection members add index keys that are not part of the path. */
function fieldPath(error: t.ValidationError): string {
  return error.context
    .filter((_entry, index) => index > 0 && !(error.context[index - 1].type instanceof t.UnionType) && !(error.context[index - 1].type instanceof t.IntersectionType))
    .map((entry) => entry.key)
    .join('.');
}

/** Decodes `body` or throws a DomainError naming the first bad field. */
export function decodeBody<A>(codec: t.Decoder<unknown, A>, body: unknown): A {
  const result = codec.decode(body ?? {});
  if (isLeft(result)) {
    const [first] = result.left;
    const field = first ? fieldPath(first) : '';
    const expected = first?.context[first.context.length - 1]?.type.name ?? 'a valid value';
    throw invalid('invalid_request', field ? `${field}: expected ${expected}` : `the body must be ${codec.name}`, field || undefined);
  }
  return result.right;
}
