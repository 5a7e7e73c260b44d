// What both search index adapters share: the words of a question as a full-text engine may
// safely be given them, vector similarity, and reciprocal rank fusion of the two rankings
// (docs/knowledge.md, "Retrieval").

/** Reciprocal rank fusion's constant, as in Cormack, Clarke and Büttcher (2009). */
export const RRF_K = 60;

/** Most chunks one search answers. */
export const MAX_SEARCH_LIMIT = 100;

/** Words of a question that say nothing about its subject; dropped unless nothing else is left. */
const STOPWORDS = new Set(
  (
    'a about after all also am an and any are as at be been but by can could did do does for from had has have he her here his how i if in into is it its ' +
    'me my no not of on or our she so than that the their them then there these they this those to too us was we were what when where which who whom why ' +
    'will with would you your'
  ).split(' '),
);

/** Most words a question is searched by: a pasted page is not a question. */
const MAX_TERMS = 32;

/**
 * The words of `text`, lower-cased, without repeats and stopwords, in their first order:
 * only letters, digits and combining marks, so that nothing a user types is read as query
 * syntax by FTS5 or MongoDB (quotes, parentheses, `*`, `-`, `NEAR`, `OR` all become plain
 * words or vanish).
 */
export function searchTerms(text: string): string[] {
  const words = [...new Set((text.normalize('NFKC').toLowerCase().match(/[\p{L}\p{N}\p{M}]+/gu) ?? []).filter((word) => /[\p{L}\p{N}]/u.test(word)))];
  const meaningful = words.filter((word) => !STOPWORDS.has(word));
  return (meaningful.length > 0 ? meaningful : words).slice(0, MAX_TERMS);
}

/** The vector scaled to length 1 (a zero vector stays zero), as Float32: cosine is then a dot product. */
export function normalized(vector: readonly number[] | Float32Array): Float32Array {
  let sum = 0;
  for (const value of vector) sum += value * value;
  const norm = Math.sqrt(sum);
  const out = new Float32Array(vector.length);
  if (norm === 0 || !Number.isFinite(norm)) return out;
  for (let index = 0; index < vector.length; index += 1) out[index] = vector[index] / norm;
  return out;
}

/** Dot product of two vectors of the same length. */
export function dot(left: Float32Array, right: Float32Array): number {
  let sum = 0;
  for (let index = 0; index < left.length; index += 1) sum += left[index] * right[index];
  return sum;
}

/** A stored vector as the bytes of its Float32 values, and back. */
export function vectorToBlob(vector: readonly number[]): Buffer {
  const floats = Float32Array.from(vector);
  return Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength);
}

export function blobToVector(blob: Buffer): Float32Array {
  // Copied: the Buffer's memory may be shared and unaligned for a Float32Array view.
  const copy = new Uint8Array(blob.byteLength);
  copy.set(blob);
  return new Float32Array(copy.buffer, 0, Math.floor(blob.byteLength / 4));
}

/** The `limit` best of `items` by `score`, highest first (a bounded selection, not a full sort). */
export function topByScore<T>(items: Iterable<T>, score: (item: T) => number, limit: number): Array<{ item: T; score: number }> {
  const best: Array<{ item: T; score: number }> = [];
  for (const item of items) {
    const value = score(item);
    if (best.length === limit && value <= best[best.length - 1].score) continue;
    let at = best.length;
    while (at > 0 && best[at - 1].score < value) at -= 1;
    best.splice(at, 0, { item, score: value });
    if (best.length > limit) best.pop();
  }
  return best;
}

/**
 * Reciprocal rank fusion: each id scores the sum of 1 / (k + rank) over the rankings it is
 * in (rank from 1), so agreement between full-text and vector search rises to the top
 * without comparing their scores, which have different scales. Ties keep the first
 * ranking's order.
 */
export function reciprocalRankFusion(rankings: ReadonlyArray<readonly string[]>, limit: number, k = RRF_K): Array<{ id: string; score: number }> {
  const scores = new Map<string, number>();
  for (const ranking of rankings) {
    ranking.forEach((id, index) => scores.set(id, (scores.get(id) ?? 0) + 1 / (k + index + 1)));
  }
  return [...scores.entries()]
    .map(([id, score]) => ({ id, score }))
    .sort((left, right) => right.score - left.score)
    .slice(0, limit);
}

/** How many candidates each ranking contributes before fusion. */
export const candidatesFor = (limit: number): number => Math.max(50, limit * 4);

/** The limit a search is run with: 1 to MAX_SEARCH_LIMIT. */
export const boundedLimit = (limit: number): number => Math.min(MAX_SEARCH_LIMIT, Math.max(1, Math.floor(Number.isFinite(limit) ? limit : 1)));
