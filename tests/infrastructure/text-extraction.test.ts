// Text extraction: the type is sniffed from the bytes (the name only tells kinds of text
// apart), and each supported type comes out as text with its headings as `#` lines of their own,
// the same whether read on the calling thread or on a worker thread (the platform's default).

import { expect } from 'chai';
import { UnsupportedDocumentError } from '../../application/ports/text-extractor';
import type { TextExtractor } from '../../application/ports/text-extractor';
import { DocumentTextExtractor } from '../../infrastructure/extraction/document-text-extractor';
import { ThreadedTextExtractor } from '../../infrastructure/extraction/threaded-text-extractor';
import { MAX_UNPACKED_BYTES } from '../../infrastructure/extraction/docx';
import { CSV, DOCX, HTML, MARKDOWN, PDF, PLAIN_TEXT } from '../../application/document/document-types';
import { docxOf, pdfOf, windowsExecutable, zipOf } from '../support/documents';

const extractor = new DocumentTextExtractor();
const text = (value: string): Buffer => Buffer.from(value, 'utf8');

async function refusal(work: Promise<unknown>): Promise<UnsupportedDocumentError> {
  try {
    await work;
  } catch (error) {
    expect(error).to.be.instanceOf(UnsupportedDocumentError);
    return error as UnsupportedDocumentError;
  }
  throw new Error('expected an UnsupportedDocumentError');
}

describe('text extraction', () => {
  describe('sniffing the type from the bytes', () => {
    it('lists the six supported types with their extensions', () => {
      expect(extractor.supported.map((type) => `${type.content_type} .${type.extension}`)).to.deep.equal([
        `${PDF} .pdf`,
        `${DOCX} .docx`,
        `${HTML} .html`,
        `${MARKDOWN} .md`,
        `${PLAIN_TEXT} .txt`,
        `${CSV} .csv`,
      ]);
    });

    it('knows a PDF and a DOCX by their bytes, whatever their names say', async () => {
      expect(extractor.sniff(pdfOf(['x']), 'notes.txt')).to.equal(PDF);
      expect(extractor.sniff(pdfOf(['x']), null)).to.equal(PDF);
      expect(extractor.sniff(await docxOf(['x']), 'scan.pdf')).to.equal(DOCX);
    });

    it('refuses binary files under any name: a Windows program renamed .pdf, a ZIP that is not a DOCX, an image, invalid UTF-8', async () => {
      expect(extractor.sniff(windowsExecutable(), 'report.pdf')).to.equal(null);
      expect(extractor.sniff(windowsExecutable(), 'report.txt')).to.equal(null);
      expect(extractor.sniff(await zipOf({ 'content.xml': '<office:document/>', mimetype: 'application/vnd.oasis.opendocument.text' }), 'letter.docx')).to.equal(null);
      expect(extractor.sniff(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]), 'photo.md')).to.equal(null);
      expect(extractor.sniff(Buffer.from([0x68, 0x69, 0xff, 0xfe, 0x21]), 'hi.txt')).to.equal(null);
      expect(extractor.sniff(text('text with a \u0000 byte'), 'a.txt')).to.equal(null);
      expect(extractor.sniff(text('\u0001\u0002\u0003\u0004 mostly control characters'), 'a.txt')).to.equal(null);
      expect(extractor.sniff(Buffer.alloc(0), 'empty.txt')).to.equal(null);
      // A ZIP whose signature is right but whose directory is cut off is no DOCX either.
      const docx = await docxOf(['x']);
      expect(extractor.sniff(docx.subarray(0, docx.length - 30), 'cut.docx')).to.equal(null);
    });

    it('tells HTML by its markup, and by its name only when it holds a tag', () => {
      expect(extractor.sniff(text('<!DOCTYPE html><html><body><p>Hi</p></body></html>'), null)).to.equal(HTML);
      expect(extractor.sniff(text('\n  <html lang="en"><p>Hi</p></html>'), 'page.txt')).to.equal(HTML);
      expect(extractor.sniff(text('<p>Just a paragraph</p>'), null)).to.equal(HTML);
      expect(extractor.sniff(text('<!-- saved page -->\n<div>x</div>'), null)).to.equal(HTML);
      expect(extractor.sniff(text('Intro line\n<section><b>bold</b></section>'), 'page.html')).to.equal(HTML);
      expect(extractor.sniff(text('no markup at all'), 'page.html')).to.equal(PLAIN_TEXT);
      expect(extractor.sniff(text('<paragraph> is not a tag we sniff'), null)).to.equal(PLAIN_TEXT);
    });

    it('takes .md and .markdown as Markdown, and text that looks like Markdown under any name', () => {
      expect(extractor.sniff(text('<div align="center">Logo</div>\n\nplain words'), 'README.md')).to.equal(MARKDOWN);
      expect(extractor.sniff(text('plain words'), 'notes.markdown')).to.equal(MARKDOWN);
      expect(extractor.sniff(text('# Returns\n\nItems can be returned.'), null)).to.equal(MARKDOWN);
      expect(extractor.sniff(text('Intro\n\n```js\ncode()\n```'), 'x.txt')).to.equal(MARKDOWN);
      expect(extractor.sniff(text('Returns\n=======\n\nSee [the policy](https://example.com).'), null)).to.equal(MARKDOWN);
      expect(extractor.sniff(text('- one\n- two\n\nThis is **bold**.'), null)).to.equal(MARKDOWN);
      expect(extractor.sniff(text('#hashtag is not a heading\nand - this is no list'), null)).to.equal(PLAIN_TEXT);
    });

    it('takes .csv as CSV, and consistently delimited rows under any name', () => {
      expect(extractor.sniff(text('just one column\nof values'), 'data.csv')).to.equal(CSV);
      expect(extractor.sniff(text('name,city\nAda,London\nGrace,"New York, NY"\n'), null)).to.equal(CSV);
      expect(extractor.sniff(text('name;city;zip\nAda;London;N1\n'), 'export.txt')).to.equal(CSV);
      expect(extractor.sniff(text('a\tb\n1\t2\n3\t4'), null)).to.equal(CSV);
      expect(extractor.sniff(text('Hello, world.\nThis line has no comma\nAnd, this one has one.'), null)).to.equal(PLAIN_TEXT);
    });

    it('reads anything else that is text as plain text, a byte-order mark allowed', () => {
      expect(extractor.sniff(text('\uFEFFOpening hours: nine to five.'), 'hours')).to.equal(PLAIN_TEXT);
      expect(extractor.sniff(text('Grüße aus Köln — ünïcödé'), null)).to.equal(PLAIN_TEXT);
    });
  });

  const extractors: Array<[string, () => TextExtractor & { close?(): Promise<void> }]> = [
    ['on the calling thread', () => new DocumentTextExtractor()],
    ['on a worker thread', () => new ThreadedTextExtractor({ maxWorkers: 1, timeoutMs: 60_000, maxHeapMb: 256 })],
  ];
  for (const [where, make] of extractors) describe(`extracting the text ${where}`, () => {
    let extractor: TextExtractor & { close?(): Promise<void> };
    before(() => {
      extractor = make();
    });
    after(() => extractor.close?.());

    it('PDF: the text of its pages (unpdf)', async () => {
      const extracted = await extractor.extract(pdfOf(['Refund policy', 'Items can be returned within 30 days (with a receipt).']), PDF);
      expect(extracted).to.equal('Refund policy\nItems can be returned within 30 days (with a receipt).');
    });

    it('PDF: a broken one is unsupported, not a crash', async () => {
      const error = await refusal(extractor.extract(Buffer.from('%PDF-1.4\nthis is not really a PDF'), PDF));
      expect(error.message).to.match(/^the PDF/);
    });

    it('DOCX: paragraphs, with "Heading N" paragraphs as heading lines (mammoth)', async () => {
      const docx = await docxOf([{ heading: 1, text: 'Returns' }, 'Items can be returned within 30 days.', { heading: 2, text: 'Exceptions & rules' }, 'Sale items are final.']);
      expect(await extractor.extract(docx, DOCX)).to.equal('# Returns\n\nItems can be returned within 30 days.\n\n## Exceptions & rules\n\nSale items are final.');
    });

    it('DOCX: refuses one that would unpack to more than the limit, before unpacking it', async () => {
      const bomb = await docxOf(['x']);
      // The archive's own directory says how large each entry unpacks; make one claim too much.
      const directory = bomb.lastIndexOf(Buffer.from('word/document.xml'));
      bomb.writeUInt32LE(MAX_UNPACKED_BYTES + 1, directory - 46 + 24);
      const error = await refusal(extractor.extract(bomb, DOCX));
      expect(error.message).to.contain('would unpack to');
      await refusal(extractor.extract(await zipOf({ 'a.txt': 'x' }), DOCX));
    });

    it('HTML: headings as lines, links without addresses, no scripts, styles or images (html-to-text)', async () => {
      const html = `<!doctype html><html><head><title>Shop</title><style>p{color:red}</style><script>alert("x")</script></head>
        <body><h1>Returns <em>policy</em></h1><p>Items can be <a href="https://example.com/r">returned</a> in 30 days.</p>
        <img src="logo.png" alt="logo"><h3>By post</h3><ul><li>Pack it</li><li>Send it</li></ul>
        <table><tr><th>Item</th><th>Days</th></tr><tr><td>Shoes</td><td>30</td></tr></table></body></html>`;
      const extracted = await extractor.extract(text(html), HTML);
      expect(extracted).to.equal('# Returns policy\n\nItems can be returned in 30 days.\n\n### By post\n\n * Pack it\n * Send it\n\nItem    Days\nShoes   30');
      expect(extracted).to.not.match(/alert|color|logo|example\.com/);
    });

    it('Markdown: headings stay lines (setext too), marks go, code keeps its lines but never reads as a heading', async () => {
      const markdown = [
        '---',
        'title: front matter',
        '---',
        'Returns',
        '=======',
        '',
        'Items can be **returned** within _30 days_, see [the policy](https://example.com/p "P").',
        '',
        '## Exceptions ##',
        '',
        '> Sale items are `final`.',
        '',
        '```sh',
        '# not a heading',
        'echo hi',
        '```',
        '',
        '| Item | Days |',
        '|------|-----:|',
        '| Shoes | 30 |',
        '',
        '[ref]: https://example.com',
        '<!-- a comment -->',
        'snake_case_names and 2*3*4 stay.',
      ].join('\n');
      expect(await extractor.extract(text(markdown), MARKDOWN)).to.equal(
        [
          '# Returns',
          '',
          'Items can be returned within 30 days, see the policy.',
          '',
          '## Exceptions',
          '',
          'Sale items are final.',
          '',
          '    # not a heading',
          '    echo hi',
          '',
          'Item | Days',
          'Shoes | 30',
          '',
          'snake_case_names and 2*3*4 stay.',
        ].join('\n'),
      );
    });

    it('CSV: each row as `column: value` lines, quoted fields and other delimiters too (csv-parse)', async () => {
      expect(await extractor.extract(text('name,city,note\nAda,London,\nGrace,"New York, NY","said ""hi"""\n'), CSV)).to.equal(
        'name: Ada\ncity: London\n\nname: Grace\ncity: New York, NY\nnote: said "hi"',
      );
      expect(await extractor.extract(text('product;price\nTea;3.50\n'), CSV)).to.equal('product: Tea\nprice: 3.50');
      expect(await extractor.extract(text('only,a,header\n'), CSV)).to.equal('only, a, header');
    });

    it('plain text: line ends, trailing spaces and blank runs tidied, the rest as it was', async () => {
      expect(await extractor.extract(text('\uFEFFLine one   \r\nLine two\r\n\r\n\r\n\r\nLine three\n'), PLAIN_TEXT)).to.equal('Line one\nLine two\n\nLine three');
      expect(await extractor.extract(text('Some text'), 'text/plain; charset=utf-8')).to.equal('Some text');
    });

    it('refuses a type it does not read, and text types whose bytes are not text', async () => {
      await refusal(extractor.extract(text('x'), 'application/x-msdownload'));
      await refusal(extractor.extract(windowsExecutable(), PLAIN_TEXT));
      await refusal(extractor.extract(windowsExecutable(), HTML));
    });
  });
});
