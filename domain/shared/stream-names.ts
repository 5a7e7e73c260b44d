// Stream names are `<category>-<id>`, built and parsed here and nowhere else. A category is
// an aggregate's name in camelCase with no dash (`tenant`, `accessDenial`, `sdkConnection`),
// so the first dash always splits category from id, as EventStoreDB's `$by_category`
// projection splits them. Names are immutable: no personal data goes into an id (a
// reservation of an email uses a keyed digest of it).

export interface StreamCategoryBrand {
  readonly StreamCategory: unique symbol;
}

/** A checked category: camelCase letters and digits, starting with a lowercase letter. */
export type StreamCategory = string & StreamCategoryBrand;

const CATEGORY = /^[a-z][a-zA-Z0-9]*$/;

export function isStreamCategory(name: string): name is StreamCategory {
  return CATEGORY.test(name);
}

/** Declares a category; a dash or any other character outside camelCase is refused. */
export function streamCategory(name: string): StreamCategory {
  if (!isStreamCategory(name)) {
    throw new Error(`stream category "${name}" must be camelCase letters and digits with no dash (for example "accessDenial")`);
  }
  return name;
}

/** `<category>-<id>`. */
export function toStreamName(category: StreamCategory, id: string): string {
  if (id.length === 0) throw new Error(`a ${category} stream needs an id`);
  return `${category}-${id}`;
}

/** Splits at the first dash: `accessDenial-42` -> `accessDenial`, `42`; a name with no dash is all category. */
export function parseStreamName(stream: string): { category: string; id: string } {
  const dash = stream.indexOf('-');
  return dash < 0 ? { category: stream, id: '' } : { category: stream.slice(0, dash), id: stream.slice(dash + 1) };
}
