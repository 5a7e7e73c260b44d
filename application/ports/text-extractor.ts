// The text extractor port: the plain text of a document's bytes, by its sniffed content type
// (infrastructure/extraction). Headings are kept as lines of their own so that chunking can
// split on them.

/** A content type the extractor reads, and its usual file extension. */
export interface SupportedType {
  content_type: string;
  extension: string;
}

export class UnsupportedDocumentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnsupportedDocumentError';
  }
}

export interface TextExtractor {
  /** The types it reads: PDF, DOCX, HTML, Markdown, plain text, CSV. */
  readonly supported: readonly SupportedType[];
  /** The content type of the bytes, sniffed from their content (the name is only a hint); null when not supported. */
  sniff(bytes: Buffer, filename: string | null): string | null;
  /** The text; UnsupportedDocumentError when the bytes are not what their type says. */
  extract(bytes: Buffer, contentType: string): Promise<string>;
}
