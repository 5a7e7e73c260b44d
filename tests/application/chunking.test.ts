// Chunking (application/knowledge/chunking.ts): headings first, sentences next, bounded
// size, overlap, and nothing of the text lost or cut inside a word.

import { expect } from 'chai';
import { type ChunkingOptions, DEFAULT_CHUNKING, HEADING_MAX_CHARACTERS, type TextChunk, chunkText } from '../../application/knowledge/chunking';

const small: ChunkingOptions = { maxCharacters: 100, overlapCharacters: 15 };

/** The words of a text, in order, as a search would see them. */
const words = (text: string): string[] => text.split(/\s+/).filter((word) => word !== '');

/** Every word of `text` appears in the chunks, in order, with overlaps counted once. */
function expectNothingLost(text: string, chunks: readonly TextChunk[], headings: readonly string[] = []): void {
  const expected = words(text).filter((word) => !headings.some((heading) => words(heading).includes(word)) && !/^#+$|^[=-]{3,}$/.test(word));
  let at = 0;
  for (const chunk of chunks) {
    const chunkWords = words(chunk.text);
    // The chunk starts inside what was already seen (its overlap) or right after it.
    let start = -1;
    for (let back = Math.min(at, chunkWords.length); back >= 0; back -= 1) {
      if (chunkWords.slice(0, back).join(' ') === expected.slice(at - back, at).join(' ')) {
        start = back;
        break;
      }
    }
    expect(start, `chunk ${chunk.ordinal} does not continue the text: ${chunk.text}`).to.be.at.least(0);
    const fresh = chunkWords.slice(start);
    expect(fresh.join(' ')).to.equal(expected.slice(at, at + fresh.length).join(' '));
    at += fresh.length;
  }
  expect(at, 'every word is in a chunk').to.equal(expected.length);
}

const sentence = (index: number): string => `Sentence number ${index} talks about the refund policy of the shop.`;

describe('chunking', () => {
  it('gives no chunk for blank text', () => {
    expect(chunkText('')).to.deep.equal([]);
    expect(chunkText('  \n\n \t \n')).to.deep.equal([]);
  });

  it('keeps a short text in one chunk, trimmed, without a heading', () => {
    expect(chunkText('  Our office opens at nine.  \n')).to.deep.equal([{ ordinal: 0, heading: null, text: 'Our office opens at nine.' }]);
  });

  it('keeps every chunk within maxCharacters, overlap included, and loses no word', () => {
    const text = Array.from({ length: 40 }, (_, index) => sentence(index)).join(' ');
    for (const options of [small, { maxCharacters: 200, overlapCharacters: 30 }, DEFAULT_CHUNKING, { maxCharacters: 100, overlapCharacters: 0 }]) {
      const chunks = chunkText(text, options);
      expect(chunks.length).to.be.greaterThan(1);
      for (const chunk of chunks) expect(chunk.text.length, chunk.text).to.be.at.most(options.maxCharacters);
      expectNothingLost(text, chunks);
      expect(chunks.map((chunk) => chunk.ordinal)).to.deep.equal(chunks.map((_, index) => index));
    }
  });

  it('cuts at sentence boundaries: every chunk of whole sentences starts and ends with one', () => {
    const text = Array.from({ length: 12 }, (_, index) => sentence(index)).join(' ');
    const chunks = chunkText(text, { maxCharacters: 200, overlapCharacters: 0 });
    for (const chunk of chunks) {
      expect(chunk.text).to.match(/^Sentence number \d+/);
      expect(chunk.text).to.match(/shop\.$/);
    }
    // Three sentences of 60 characters fit in 200 with the spaces between them; four do not.
    expect(chunks[0].text).to.equal([0, 1, 2].map(sentence).join(' '));
  });

  it('repeats the last sentences of a chunk at the start of the next, up to overlapCharacters', () => {
    const text = Array.from({ length: 10 }, (_, index) => `Point ${index} is short.`).join(' ');
    const chunks = chunkText(text, { maxCharacters: 60, overlapCharacters: 20 });
    expect(chunks.map((chunk) => chunk.text)).to.deep.equal([
      'Point 0 is short. Point 1 is short. Point 2 is short.',
      'Point 2 is short. Point 3 is short. Point 4 is short.',
      'Point 4 is short. Point 5 is short. Point 6 is short.',
      'Point 6 is short. Point 7 is short. Point 8 is short.',
      'Point 8 is short. Point 9 is short.',
    ]);
  });

  it('overlaps with the last whole words when even the last sentence is longer than the overlap', () => {
    const text = 'Alpha bravo charlie delta echo foxtrot golf hotel india juliet. Kilo lima mike.';
    const chunks = chunkText(text, { maxCharacters: 70, overlapCharacters: 12 });
    expect(chunks.map((chunk) => chunk.text)).to.deep.equal(['Alpha bravo charlie delta echo foxtrot golf hotel india juliet.', 'juliet. Kilo lima mike.']);
    // The overlap gives way to a sentence that needs the room.
    const tight = chunkText('Alpha bravo charlie delta echo foxtrot golf hotel india juliet. Kilo lima mike november oscar papa quebec romeo sierra tango.', {
      maxCharacters: 70,
      overlapCharacters: 12,
    });
    expect(tight.map((chunk) => chunk.text)).to.deep.equal(['Alpha bravo charlie delta echo foxtrot golf hotel india juliet.', 'juliet. Kilo lima mike november oscar papa quebec romeo sierra tango.']);
  });

  it('cuts a sentence longer than the limit between words, and only a longer word inside', () => {
    const long = Array.from({ length: 60 }, (_, index) => `word${index}`).join(' ');
    const chunks = chunkText(long, { maxCharacters: 50, overlapCharacters: 0 });
    for (const chunk of chunks) {
      expect(chunk.text.length).to.be.at.most(50);
      for (const word of words(chunk.text)) expect(word, 'a whole word').to.match(/^word\d+$/);
    }
    expectNothingLost(long, chunks);

    const giant = 'x'.repeat(125);
    const pieces = chunkText(`Before. ${giant} after.`, { maxCharacters: 50, overlapCharacters: 0 }).map((chunk) => chunk.text);
    expect(pieces.join('').replace(/\s/g, '')).to.equal(`Before.${giant}after.`);
    for (const piece of pieces) expect(piece.length).to.be.at.most(50);
    expect(pieces.filter((piece) => /^x+$/.test(piece))).to.deep.equal(['x'.repeat(50), 'x'.repeat(50)]);
  });

  it('never cuts inside a surrogate pair', () => {
    const emoji = '😀'.repeat(40); // 80 UTF-16 units, no whitespace
    const chunks = chunkText(emoji, { maxCharacters: 25, overlapCharacters: 0 });
    expect(chunks.map((chunk) => chunk.text).join('')).to.equal(emoji);
    for (const chunk of chunks) expect([...chunk.text].every((character) => character === '😀'), chunk.text).to.equal(true);
  });

  it('does not split after an abbreviation followed by a lower-case word', () => {
    const text = 'Bring a document, e.g. a passport or an identity card, to the desk. Then wait.';
    const chunks = chunkText(text, { maxCharacters: 70, overlapCharacters: 0 });
    expect(chunks[0].text).to.equal('Bring a document, e.g. a passport or an identity card, to the desk.');
  });

  describe('headings', () => {
    it('splits at Markdown headings, each chunk under its nearest heading, never spanning two sections', () => {
      const text = ['Intro line before any heading.', '', '# Billing', 'We bill monthly.', '', '## Refunds', 'Refunds take five days.', '### Deep #', 'Deeper text.'].join('\n');
      expect(chunkText(text)).to.deep.equal([
        { ordinal: 0, heading: null, text: 'Intro line before any heading.' },
        { ordinal: 1, heading: 'Billing', text: 'We bill monthly.' },
        { ordinal: 2, heading: 'Refunds', text: 'Refunds take five days.' },
        { ordinal: 3, heading: 'Deep', text: 'Deeper text.' },
      ]);
    });

    it('takes a line underlined with === or --- as a heading', () => {
      const text = ['Shipping', '========', 'We ship worldwide.', '', 'Returns', '---', 'Send it back within 30 days.'].join('\n');
      expect(chunkText(text).map(({ heading, text: body }) => [heading, body])).to.deep.equal([
        ['Shipping', 'We ship worldwide.'],
        ['Returns', 'Send it back within 30 days.'],
      ]);
    });

    it('takes a short line standing alone between blank lines as a heading (as DOCX and HTML headings are extracted)', () => {
      const text = ['Opening hours', '', 'We open at nine and close at five.', '', 'Contact us', '', 'Write to help@example.com.'].join('\n');
      expect(chunkText(text).map(({ heading, text: body }) => [heading, body])).to.deep.equal([
        ['Opening hours', 'We open at nine and close at five.'],
        ['Contact us', 'Write to help@example.com.'],
      ]);
    });

    it('does not take a sentence, a list item, a quote, a table row, a long line or a closing line for a heading', () => {
      const notHeadings = [
        'This line ends like a sentence.',
        'Is this a question?',
        '- a bulleted item',
        '* another item',
        '1. a numbered step',
        '2) another step',
        '> a quoted line',
        '| a | table | row |',
        '12345',
        'x'.repeat(HEADING_MAX_CHARACTERS + 1),
      ];
      for (const line of notHeadings) {
        const chunks = chunkText(`${line}\n\nSome text after it.`);
        expect(chunks.map((chunk) => chunk.heading), line).to.deep.equal([null]);
      }
      expect(chunkText('Text first.\n\nKind regards').map((chunk) => chunk.heading), 'the last line').to.deep.equal([null]);
      // A short line inside a paragraph is text, not a heading.
      expect(chunkText('First line\nSecond line continues the paragraph.\n\nMore.').map((chunk) => chunk.heading)).to.deep.equal([null]);
    });

    it('keeps a heading with no text under it as the first line of the next section', () => {
      const text = ['# User guide', '## Installing', 'Run the installer.', '# Appendix'].join('\n');
      expect(chunkText(text).map(({ heading, text: body }) => [heading, body])).to.deep.equal([
        ['Installing', 'User guide\n\nRun the installer.'],
        [null, 'Appendix'],
      ]);
    });

    it('indexes a text of headings alone', () => {
      expect(chunkText('# One\n# Two').map((chunk) => chunk.text)).to.deep.equal(['One\nTwo']);
    });

    it('starts each section afresh: no overlap across a heading', () => {
      const text = `# First\n${Array.from({ length: 5 }, (_, index) => sentence(index)).join(' ')}\n# Second\nOnly this.`;
      const chunks = chunkText(text, small);
      const second = chunks.filter((chunk) => chunk.heading === 'Second');
      expect(second.map((chunk) => chunk.text)).to.deep.equal(['Only this.']);
      expectNothingLost(text, chunks, ['First', 'Second']);
    });
  });

  it('keeps line breaks inside a chunk (lists, table rows) and treats Windows line ends alike', () => {
    const chunks = chunkText('Steps:\r\n- open the box\r\n- plug it in\r\n\r\nDone.');
    expect(chunks).to.deep.equal([{ ordinal: 0, heading: null, text: 'Steps:\n- open the box\n- plug it in\n\nDone.' }]);
  });

  it('gives the same chunks for the same text', () => {
    const text = Array.from({ length: 30 }, (_, index) => (index % 7 === 0 ? `\n## Part ${index}\n` : sentence(index))).join(' ');
    expect(chunkText(text)).to.deep.equal(chunkText(text));
  });

  it('refuses options that cannot work', () => {
    expect(() => chunkText('x', { maxCharacters: 10, overlapCharacters: 0 })).to.throw(RangeError);
    expect(() => chunkText('x', { maxCharacters: 100, overlapCharacters: 100 })).to.throw(RangeError);
    expect(() => chunkText('x', { maxCharacters: 100, overlapCharacters: -1 })).to.throw(RangeError);
    expect(() => chunkText('x', { maxCharacters: 100.5, overlapCharacters: 1 })).to.throw(RangeError);
  });

  it('cuts a realistic document of about 8,000 characters into about ten chunks of at most 800', () => {
    const paragraphs = Array.from({ length: 12 }, (_, part) => [`## Topic ${part}`, Array.from({ length: 10 }, (_, index) => sentence(part * 10 + index)).join(' ')].join('\n\n'));
    const text = paragraphs.join('\n\n');
    const chunks = chunkText(text);
    expect(text.length).to.be.within(7000, 9000);
    expect(chunks.length).to.be.within(10, 14);
    for (const chunk of chunks) expect(chunk.text.length).to.be.at.most(DEFAULT_CHUNKING.maxCharacters);
    expect(new Set(chunks.map((chunk) => chunk.heading)).size).to.equal(12);
  });
});
