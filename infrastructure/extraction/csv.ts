// CSV to text with csv-parse: the first row names the columns, and each further row becomes a
// block of `column: value` lines (empty values left out), rows apart by a blank line, so that a
// passage read alone still says what each value is. The delimiter is the one sniffing finds
// (`,`, `;` or tab), `,` when none is consistent.

import { parse } from 'csv-parse';
import { UnsupportedDocumentError } from '../../application/ports/text-extractor';
import { delimiterOf } from './sniff';
import { tidyText } from './tidy';

function rowsOf(text: string): Promise<string[][]> {
  return new Promise((resolve, reject) => {
    parse(text, { delimiter: delimiterOf(text, 'known_csv') ?? ',', bom: true, relax_column_count: true, relax_quotes: true, skip_empty_lines: true, trim: true }, (error, rows) => {
      if (error) reject(new UnsupportedDocumentError(`the CSV could not be read (${error.message.slice(0, 200)})`));
      else resolve(rows as string[][]);
    });
  });
}

export async function csvText(text: string): Promise<string> {
  const rows = await rowsOf(text);
  if (rows.length === 0) return '';
  const [header, ...records] = rows;
  const names = header.map((name, index) => name.replace(/\s+/g, ' ') || `column ${index + 1}`);
  if (records.length === 0) return tidyText(names.join(', '));
  const blocks = records.map((record) =>
    record
      .map((value, index) => [index < names.length ? names[index] : `column ${index + 1}`, value.replace(/\s*\n\s*/g, ' ')] as const)
      .filter(([, value]) => value !== '')
      .map(([name, value]) => `${name}: ${value}`)
      .join('\n'),
  );
  return tidyText(blocks.filter((block) => block !== '').join('\n\n'));
}
