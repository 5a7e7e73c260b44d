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
    const problem = first?.message ?? `expected ${expected}`;
    throw invalid('invalid_request', field ? `${field}: ${problem}` : `the body must be ${codec.name}`, field || undefined);
  }
  return result.right;
}

/** The codecs made by closedPartial, whose OpenAPI schema says so (`additionalProperties: false`). */
export const CLOSED_OBJECTS = new WeakSet<t.Mixed>();

/**
 * An object of optional known fields that refuses any other (400 naming it) instead of
 * dropping it as `t.exact` does: for a map of known keys, where a misspelt one would silently
 * mean something else (a quota override replacing the others with nothing).
 */
export function closedPartial<P extends t.Props>(props: P, name?: string): t.ExactC<t.PartialC<P>> {
  const exact = t.exact(t.partial(props), name);
  const fields = Object.keys(props);
  const validate: t.Validate<unknown, t.TypeOf<typeof exact>> = (input, context) => {
    if (t.UnknownRecord.is(input)) {
      const unknown = Object.keys(input).find((key) => !fields.includes(key));
      if (unknown !== undefined) {
        return t.failure(input[unknown], t.appendContext(context, unknown, t.never, input[unknown]), `not a field here (the fields are ${fields.join(', ')})`);
      }
    }
    return exact.validate(input, context);
  };
  const closed = new t.ExactType(exact.name, exact.is, validate, exact.encode, exact.type);
  CLOSED_OBJECTS.add(closed);
  return closed;
}
