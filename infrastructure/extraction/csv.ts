// CSV to text with csv-parse: the first row names the columns, and each further row becomes a
// block of `column: value` lines (empty values left out), rows apart by a blank line, so that a
// passage read alone still says what each value is. The delimiter is the one sniffing finds
// (`,`, `;` or tab), `,` when none is consistent.

import { parse } from 'csv-parse/sync';
import { UnsupportedDocumentError } from '../../application/ports/text-extractor';
import { delimiterOf } from './sniff';
import { tidyText } from './tidy';

export function csvText(text: string): string {
  let rows: string[][];
  try {
    rows = parse(text, { delimiter: delimiterOf(text, 'known_csv') ?? ',', bom: true, relax_column_count: true, relax_quotes: true, skip_empty_lines: true, trim: true }) as string[][];
  } catch (error) {
    throw new UnsupportedDocumentError(`the CSV could not be read (${error instanceof Error ? error.message.slice(0, 200) : 'unknown error'})`);
  }
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
