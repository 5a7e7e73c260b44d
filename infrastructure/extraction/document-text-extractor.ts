// The text extractor of the platform: sniffs a document's type from its bytes (sniff.ts) and
// reads its text with a well-kept library per type: unpdf (pdf.js) for PDF, mammoth for DOCX,
// html-to-text for HTML, csv-parse for CSV; Markdown and plain text are cleaned up here. Every
// text leaves in one shape (tidy.ts): headings as `#` lines of their own, `\n` line ends, at
// most one blank line in a row.

import { type SupportedType, type TextExtractor, UnsupportedDocumentError } from '../../application/ports/text-extractor';
import { markdownText } from './markdown';
import { sniffDocumentType, textOf } from './sniff';
import { tidyText } from './tidy';
import { CSV, DOCX, HTML, MARKDOWN, PDF, PLAIN_TEXT, SUPPORTED_TYPES } from '../../application/document/document-types';

/** The media type without parameters (`text/plain; charset=utf-8` -> `text/plain`). */
const mediaTypeOf = (contentType: string): string => contentType.split(';')[0].trim().toLowerCase();

export class DocumentTextExtractor implements TextExtractor {
  readonly supported: readonly SupportedType[] = SUPPORTED_TYPES;

  sniff(bytes: Buffer, filename: string | null): string | null {
    return sniffDocumentType(bytes, filename);
  }

  // The library of a type is loaded with its first document: a process that reads no PDF
  // never loads pdf.js (nor the operator CLI any of them).
  async extract(bytes: Buffer, contentType: string): Promise<string> {
    const type = mediaTypeOf(contentType);
    switch (type) {
      case PDF:
        return (await import('./pdf')).pdfText(bytes);
      case DOCX:
        return (await import('./docx')).docxText(bytes);
      case HTML:
        return (await import('./html')).htmlText(this.text(bytes, type));
      case MARKDOWN:
        return markdownText(this.text(bytes, type));
      case CSV:
        return (await import('./csv')).csvText(this.text(bytes, type));
      case PLAIN_TEXT:
        return tidyText(this.text(bytes, type));
      default:
        throw new UnsupportedDocumentError(`${type} is not a document type the platform reads`);
    }
  }

  private text(bytes: Buffer, type: string): string {
    const text = textOf(bytes);
    if (text === null) throw new UnsupportedDocumentError(`the bytes are not ${type} text (not UTF-8, or binary)`);
    return text;
  }
}
