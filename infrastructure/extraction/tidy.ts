// The one shape every extractor's text leaves in: NFC, `\n` line ends, no trailing spaces, at
// most one blank line in a row, no blank lines at either end. Headings are lines of their own,
// written the Markdown way (`## Returns`), with a blank line before and after, so that chunking
// finds them the same way whatever the document was.

export function tidyText(text: string): string {
  return text
    .normalize('NFC')
    .replace(/\r\n?/g, '\n')
    .replace(/[ \t\u00a0]+$/gm, '')
    .replace(/\n{3,}/g, '\n\n')
    .replace(/^\n+|\n+$/g, '');
}

/** A heading line of `level` (1 to 6), the way every extractor writes one. */
export const headingLine = (level: number, text: string): string => `${'#'.repeat(Math.min(6, Math.max(1, level)))} ${text.replace(/\s+/g, ' ').trim()}`;
