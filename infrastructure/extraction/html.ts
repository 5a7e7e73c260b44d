// HTML to text with html-to-text: headings become `#` lines of their own, links keep their
// words and drop their addresses, scripts, styles, images and forms are left out, tables come
// out row by row. DOCX goes through here too (mammoth turns it into HTML first).

import { type FormatCallback, type HtmlToTextOptions, convert } from 'html-to-text';
import { headingLine, tidyText } from './tidy';

/** `<hN>` as a heading line: its text on one line, `#` times its level, a blank line around it. */
const heading =
  (level: number): FormatCallback =>
  (element, walk, builder) => {
    builder.openBlock({ leadingLineBreaks: 2 });
    builder.pushWordTransform((word) => word);
    builder.addLiteral(`${'#'.repeat(level)} `);
    walk(element.children, builder);
    builder.popWordTransform();
    builder.closeBlock({ trailingLineBreaks: 2 });
  };

const LEVELS = [1, 2, 3, 4, 5, 6];
const SKIPPED = ['head', 'script', 'style', 'noscript', 'template', 'img', 'svg', 'canvas', 'iframe', 'object', 'embed', 'form', 'button', 'select', 'input', 'textarea'];

const OPTIONS: HtmlToTextOptions = {
  wordwrap: false,
  decodeEntities: true,
  formatters: Object.fromEntries(LEVELS.map((level) => [`heading${level}`, heading(level)])),
  selectors: [
    ...LEVELS.map((level) => ({ selector: `h${level}`, format: `heading${level}` })),
    { selector: 'a', options: { ignoreHref: true } },
    { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false, maxColumnWidth: 200 } },
    ...SKIPPED.map((selector) => ({ selector, format: 'skip' })),
  ],
};

/** The text of an HTML document or fragment. */
export function htmlText(html: string): string {
  const text = convert(html, OPTIONS);
  // A heading's text may have held line breaks (`<br>`): it stays one line.
  return tidyText(text.replace(/^(#{1,6}) (.*)$/gm, (_line, marks: string, words: string) => headingLine(marks.length, words)));
}
