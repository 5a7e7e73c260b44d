// Text extraction for plain text and Markdown, as the platform's extractor does it for those
// two types (infrastructure/extraction on the documents branch replaces this in the
// platform): UTF-8 decoded strictly, a NUL byte or invalid UTF-8 refused as not text, a byte
// order mark dropped. Only what the indexing tests need; sniffing answers by content.

import { type SupportedType, type TextExtractor, UnsupportedDocumentError } from '../../application/ports/text-extractor';

export class PlainTextExtractor implements TextExtractor {
  readonly supported: readonly SupportedType[] = [
    { content_type: 'text/plain', extension: 'txt' },
    { content_type: 'text/markdown', extension: 'md' },
  ];

  sniff(bytes: Buffer, filename: string | null): string | null {
    if (this.decode(bytes) === null) return null;
    return filename?.toLowerCase().endsWith('.md') ? 'text/markdown' : 'text/plain';
  }

  async extract(bytes: Buffer, contentType: string): Promise<string> {
    if (!this.supported.some((type) => type.content_type === contentType)) throw new UnsupportedDocumentError(`${contentType} is not a supported type`);
    const text = this.decode(bytes);
    if (text === null) throw new UnsupportedDocumentError('the bytes are not UTF-8 text');
    return text;
  }

  private decode(bytes: Buffer): string | null {
    if (bytes.includes(0)) return null;
    try {
      return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
    } catch {
      return null;
    }
  }
}
