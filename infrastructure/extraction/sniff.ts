// Which kind of document some bytes are, decided from the bytes; the file name only chooses
// between kinds of text that the bytes cannot tell apart (a `.md` file is Markdown, a `.csv`
// file CSV). Anything else is refused, whatever its name says: a Windows program renamed
// `report.pdf` does not start with `%PDF-`, is not a ZIP holding `word/document.xml`, and is
// not text, so it is not a document.
//
// 1. `%PDF-` at the start: PDF.
// 2. A ZIP whose table of contents holds `word/document.xml`: DOCX (any other ZIP is refused).
// 3. Otherwise the bytes must be text: valid UTF-8 (a byte-order mark allowed), no NUL byte,
//    and almost no other control characters. Then:
//    - `.md` / `.markdown`: Markdown;
//    - markup at the start (the HTML signatures of the WHATWG MIME sniffing standard:
//      `<!DOCTYPE HTML`, `<html`, `<head`, `<body`, `<p`, `<div`, ... `<!--`), or `.html` /
//      `.htm` with a tag in it: HTML;
//    - `.csv`: CSV;
//    - Markdown headings or fences, or several other Markdown marks: Markdown;
//    - rows that all split into the same number (2 or more) of fields by `,`, `;` or tab: CSV;
//    - anything else: plain text.

import { CSV, DOCX, HTML, MARKDOWN, PDF, PLAIN_TEXT } from '../../application/document/document-types';
import { zipEntries } from './zip';

const PDF_SIGNATURE = Buffer.from('%PDF-', 'latin1');
const ZIP_SIGNATURE = Buffer.from([0x50, 0x4b, 0x03, 0x04]);
const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** The lower-cased extension of a file name, without the dot; '' when none. */
export function extensionOf(filename: string | null): string {
  if (!filename) return '';
  const base = filename.split(/[\\/]/).pop() ?? '';
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot + 1).toLowerCase() : '';
}

/** Control characters a text file does not hold (tab, line feed, vertical tab, form feed and carriage return are text). */
const CONTROL = /[\u0001-\u0008\u000E-\u001F\u007F]/g;

/** The text of the bytes, or null when they are not text (not UTF-8, a NUL byte, control characters). */
export function textOf(bytes: Buffer): string | null {
  const body = bytes.subarray(0, UTF8_BOM.length).equals(UTF8_BOM) ? bytes.subarray(UTF8_BOM.length) : bytes;
  if (body.includes(0)) return null;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    return null;
  }
  const controls = text.match(CONTROL)?.length ?? 0;
  // A stray control character in a long text (a form feed's cousin, a DOS end-of-file mark) is tolerated; more is binary.
  if (controls > Math.floor(text.length / 1000)) return null;
  return text;
}

/** The WHATWG MIME sniffing standard's HTML signatures, each followed by a space or `>`. */
const HTML_SIGNATURE = /^\s*(?:<!--|<(?:!doctype html|html|head|script|iframe|h1|div|font|table|a|style|title|b|body|br|p)[\s>])/i;

export function looksLikeHtml(text: string): boolean {
  return HTML_SIGNATURE.test(text.slice(0, 1024));
}

const SAMPLE_LINES = 50;

/** Several Markdown marks: an ATX heading or a fence settles it; otherwise two kinds of mark. */
export function looksLikeMarkdown(text: string): boolean {
  const lines = text.split(/\r?\n/).slice(0, 200);
  if (lines.some((line) => /^#{1,6}[ \t]+\S/.test(line) || /^(`{3,}|~{3,})/.test(line))) return true;
  const marks = [
    lines.some((line, index) => index > 0 && /^(=+|-+)[ \t]*$/.test(line) && lines[index - 1].trim() !== '' && !/^\s*[-*+]\s/.test(lines[index - 1])),
    /\[[^\]\n]+\]\([^)\s]+\)/.test(text),
    /(\*\*|__)\S[^\n]*?\S\1/.test(text),
    lines.some((line) => /^\s{0,3}([-*+]|\d+\.)[ \t]+\S/.test(line)),
    lines.some((line) => /^\s{0,3}>[ \t]?\S/.test(line)),
    lines.some((line) => /^\s*\|.*\|\s*$/.test(line)) && lines.some((line) => /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)+\|?\s*$/.test(line)),
  ];
  return marks.filter(Boolean).length >= 2;
}

/** Field separators outside quotes per line. */
function separatorsOutsideQuotes(line: string, delimiter: string): number {
  let count = 0;
  let quoted = false;
  for (const character of line) {
    if (character === '"') quoted = !quoted;
    else if (character === delimiter && !quoted) count += 1;
  }
  return count;
}

const DELIMITERS = [',', ';', '\t'] as const;

/**
 * The delimiter that splits every sampled row into the same number (2 or more) of fields; null
 * when none does. Sniffing also wants enough rows to be sure (`evidence`): a header and two
 * rows, or a header and one row of three or more fields.
 */
export function delimiterOf(text: string, evidence: 'sniffing' | 'known_csv' = 'sniffing'): string | null {
  const lines = text
    .split(/\r?\n/)
    .filter((line) => line.trim() !== '')
    .slice(0, SAMPLE_LINES);
  for (const delimiter of DELIMITERS) {
    const counts = lines.map((line) => separatorsOutsideQuotes(line, delimiter));
    if (counts.length === 0 || counts[0] === 0 || !counts.every((count) => count === counts[0])) continue;
    if (evidence === 'known_csv' || lines.length >= 3 || (lines.length === 2 && counts[0] >= 2)) return delimiter;
  }
  if (evidence === 'sniffing') return null;
  // A file that says it is CSV: the delimiter its header uses most.
  const header = lines[0] ?? '';
  const [most] = [...DELIMITERS].sort((a, b) => separatorsOutsideQuotes(header, b) - separatorsOutsideQuotes(header, a));
  return separatorsOutsideQuotes(header, most) > 0 ? most : null;
}

/** The content type of the bytes; null when they are no document the platform reads. */
export function sniffDocumentType(bytes: Buffer, filename: string | null): string | null {
  if (bytes.length === 0) return null;
  if (bytes.subarray(0, PDF_SIGNATURE.length).equals(PDF_SIGNATURE)) return PDF;
  if (bytes.subarray(0, ZIP_SIGNATURE.length).equals(ZIP_SIGNATURE)) {
    return zipEntries(bytes)?.some((entry) => entry.name === 'word/document.xml') ? DOCX : null;
  }
  const text = textOf(bytes);
  if (text === null) return null;
  const extension = extensionOf(filename);
  if (extension === 'md' || extension === 'markdown') return MARKDOWN;
  if (looksLikeHtml(text) || ((extension === 'html' || extension === 'htm') && /<[a-z!/][^>]*>/i.test(text))) return HTML;
  if (extension === 'csv') return CSV;
  if (looksLikeMarkdown(text)) return MARKDOWN;
  if (delimiterOf(text) !== null) return CSV;
  return PLAIN_TEXT;
}
