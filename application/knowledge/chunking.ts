// Chunking: a document's extracted text cut into passages small enough to retrieve and cite,
// each knowing the heading it sits under. Pure: no I/O, the same text always gives the same
// chunks (docs/knowledge.md, "Chunking").
//
// The rule, in order:
// 1. Headings split the text into sections, and a chunk never spans two sections. A heading
//    is a Markdown heading line (`# ...` to `###### ...`, or a line underlined with `===` or
//    `---`), or a short line standing alone: at most HEADING_MAX_CHARACTERS, after a blank
//    line (or at the start) and before one, not ending in sentence punctuation (. , ; ! ?),
//    not a list item (bulleted or numbered), quote or table row, and with a letter in it.
//    A heading with no text under it (a title right above a subheading) opens the next
//    section's text, so no line of the document is ever dropped. The extractors keep
//    headings as lines of their own (application/ports/text-extractor.ts), so DOCX and HTML
//    headings look like this too.
// 2. Within a section, sentences (Unicode sentence boundaries through Intl.Segmenter; a line
//    break ends a sentence too, so list items and table rows stay whole) are packed into a
//    chunk until the next one would pass `maxCharacters`.
// 3. The next chunk of the same section starts with the last sentences of the one before,
//    up to `overlapCharacters` (or, when even the last sentence is longer, its last words),
//    so a passage cut at a boundary is still found whole in one of the two.
// 4. A sentence longer than `maxCharacters` is cut between words; only a single word longer
//    than the limit is cut inside (never inside a surrogate pair).
// Lengths are JavaScript string lengths (UTF-16 code units).

export interface ChunkingOptions {
  /** The most characters a chunk holds, overlap included. */
  maxCharacters: number;
  /** How much of the previous chunk the next one repeats (below maxCharacters). */
  overlapCharacters: number;
}

export const DEFAULT_CHUNKING: ChunkingOptions = { maxCharacters: 800, overlapCharacters: 120 };

/** A standalone line longer than this is text, not a heading. */
export const HEADING_MAX_CHARACTERS = 80;

export interface TextChunk {
  /** 0, 1, 2 ... in document order. */
  ordinal: number;
  /** The nearest heading above the chunk; null before the first heading or without headings. */
  heading: string | null;
  text: string;
}

interface Section {
  heading: string | null;
  lines: string[];
}

const ATX_HEADING = /^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/;
const SETEXT_UNDERLINE = /^ {0,3}(?:=+|-+)[ \t]*$/;
const NOT_A_HEADING_START = /^\s*(?:[-*+•>|]|\d+[.)](?:\s|$))/;
const ENDS_LIKE_A_SENTENCE = /[.,;:!?…。！？]["'”’)\]]*$/;
const HAS_A_LETTER = /\p{L}/u;

const isBlank = (line: string | undefined): boolean => line === undefined || line.trim() === '';

/** Cuts `text` into chunks; blank text gives none. */
export function chunkText(text: string, options: ChunkingOptions = DEFAULT_CHUNKING): TextChunk[] {
  checkOptions(options);
  const chunks: TextChunk[] = [];
  for (const section of withBodies(splitSections(text.replace(/\r\n?/g, '\n')))) {
    for (const piece of packSection(section.lines.join('\n'), options)) chunks.push({ ordinal: chunks.length, heading: section.heading, text: piece });
  }
  return chunks;
}

/**
 * Sections with text under them. A heading with nothing under it (a title right above a
 * subheading) is not lost: its line opens the next section's text, or, at the end, a
 * section of its own.
 */
function withBodies(sections: readonly Section[]): Section[] {
  const kept: Section[] = [];
  let pending: string[] = [];
  for (const section of sections) {
    if (!section.lines.some((line) => !isBlank(line))) {
      if (section.heading !== null) pending.push(section.heading);
      continue;
    }
    kept.push({ heading: section.heading, lines: pending.length > 0 ? [...pending, '', ...section.lines] : section.lines });
    pending = [];
  }
  if (pending.length > 0) kept.push({ heading: null, lines: pending });
  return kept;
}

function checkOptions({ maxCharacters, overlapCharacters }: ChunkingOptions): void {
  if (!Number.isInteger(maxCharacters) || maxCharacters < 20) throw new RangeError(`maxCharacters must be an integer of at least 20, got ${maxCharacters}`);
  if (!Number.isInteger(overlapCharacters) || overlapCharacters < 0 || overlapCharacters >= maxCharacters) {
    throw new RangeError(`overlapCharacters must be an integer from 0 to below maxCharacters, got ${overlapCharacters}`);
  }
}

/** The heading a line is, or null: see rule 1 above. */
export function headingOf(lines: readonly string[], index: number): { text: string; lines: number } | null {
  const line = lines[index];
  const atx = ATX_HEADING.exec(line);
  if (atx) return atx[1].trim() === '' ? { text: '', lines: 1 } : { text: atx[1].trim(), lines: 1 };
  const trimmed = line.trim();
  if (trimmed === '' || !HAS_A_LETTER.test(trimmed) || trimmed.length > HEADING_MAX_CHARACTERS) return null;
  const next = lines[index + 1];
  if (next !== undefined && SETEXT_UNDERLINE.test(next) && next.trim().length >= 3 && isBlank(lines[index - 1])) return { text: trimmed, lines: 2 };
  if (NOT_A_HEADING_START.test(line) || ENDS_LIKE_A_SENTENCE.test(trimmed)) return null;
  // Standing alone, with text after it: the last line of a text is a closing line, not a heading.
  const standsAlone = isBlank(lines[index - 1]) && next !== undefined && isBlank(next);
  const textFollows = lines.slice(index + 1).some((later) => !isBlank(later));
  return standsAlone && textFollows ? { text: trimmed, lines: 1 } : null;
}

function splitSections(text: string): Section[] {
  const lines = text.split('\n');
  const sections: Section[] = [{ heading: null, lines: [] }];
  for (let index = 0; index < lines.length; ) {
    const heading = headingOf(lines, index);
    if (heading) {
      // An empty Markdown heading (`#`) ends the section without naming the next one.
      sections.push({ heading: heading.text === '' ? null : heading.text, lines: [] });
      index += heading.lines;
    } else {
      sections[sections.length - 1].lines.push(lines[index]);
      index += 1;
    }
  }
  return sections;
}

const sentences = new Intl.Segmenter('en', { granularity: 'sentence' });

/** The section's sentences (each with the whitespace after it), long ones cut to fit. */
function sentencesOf(text: string, max: number): string[] {
  const pieces: string[] = [];
  for (const { segment } of sentences.segment(text)) {
    if (segment.trim() === '') {
      // Blank lines between paragraphs: keep them as whitespace of the sentence before.
      if (pieces.length > 0) pieces[pieces.length - 1] += segment;
      continue;
    }
    if (segment.trimEnd().length <= max) pieces.push(segment);
    else pieces.push(...cutBetweenWords(segment.trimEnd(), max));
  }
  return pieces;
}

/** Pieces of at most `max` characters, cut at whitespace; a word longer than `max` is cut inside. */
function cutBetweenWords(sentence: string, max: number): string[] {
  const pieces: string[] = [];
  let current = '';
  for (const word of sentence.match(/\S+\s*/g) ?? []) {
    if ((current + word).trimEnd().length <= max) {
      current += word;
      continue;
    }
    if (current !== '') pieces.push(current);
    current = '';
    let rest = word;
    while (rest.trimEnd().length > max) {
      const cut = safeCut(rest, max);
      pieces.push(rest.slice(0, cut));
      rest = rest.slice(cut);
    }
    current = rest;
  }
  if (current.trim() !== '') pieces.push(current);
  return pieces;
}

/** `at`, moved back one when it would split a surrogate pair. */
function safeCut(text: string, at: number): number {
  const code = text.charCodeAt(at - 1);
  return code >= 0xd800 && code <= 0xdbff ? at - 1 : at;
}

/** The sentences packed into chunks of at most `maxCharacters`, each after the first overlapping the one before. */
function packSection(text: string, { maxCharacters, overlapCharacters }: ChunkingOptions): string[] {
  const units = sentencesOf(text, maxCharacters);
  const chunks: string[] = [];
  let current: string[] = [];
  const length = (parts: readonly string[]): number => parts.join('').trim().length;
  for (const unit of units) {
    if (current.length > 0 && length([...current, unit]) > maxCharacters) {
      chunks.push(current.join('').trim());
      current = overlapOf(current, Math.min(overlapCharacters, maxCharacters - unit.trim().length - 1));
      // The whitespace between the overlap and the sentence counts too.
      if (length([...current, unit]) > maxCharacters) current = [];
    }
    current.push(unit);
  }
  if (current.length > 0 && current.join('').trim() !== '') chunks.push(current.join('').trim());
  return chunks;
}

/**
 * The end of a chunk repeated at the start of the next: its last whole sentences that fit in
 * `budget`, or, when even the last sentence does not, its last whole words that do.
 */
function overlapOf(previous: readonly string[], budget: number): string[] {
  if (budget <= 0) return [];
  const kept: string[] = [];
  for (let index = previous.length - 1; index >= 0; index -= 1) {
    const candidate = [previous[index], ...kept];
    if (candidate.join('').trim().length > budget) break;
    kept.unshift(previous[index]);
  }
  if (kept.length > 0) return [kept.join('').trimStart()];
  const words = previous[previous.length - 1].trimEnd().split(/\s+/);
  let tail = '';
  for (let index = words.length - 1; index > 0; index -= 1) {
    const candidate = tail === '' ? words[index] : `${words[index]} ${tail}`;
    if (candidate.length > budget) break;
    tail = candidate;
  }
  return tail === '' ? [] : [`${tail} `];
}
