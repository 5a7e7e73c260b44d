// The document types the platform reads, by content type, with their usual extension. The
// content type is what sniffing decides from the bytes (infrastructure/extraction); the
// extension only names a download. The API description lists the same types.

import type { SupportedType } from '../ports/text-extractor';

export const PDF = 'application/pdf';
export const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
export const HTML = 'text/html';
export const MARKDOWN = 'text/markdown';
export const PLAIN_TEXT = 'text/plain';
export const CSV = 'text/csv';

export const SUPPORTED_TYPES: readonly SupportedType[] = [
  { content_type: PDF, extension: 'pdf' },
  { content_type: DOCX, extension: 'docx' },
  { content_type: HTML, extension: 'html' },
  { content_type: MARKDOWN, extension: 'md' },
  { content_type: PLAIN_TEXT, extension: 'txt' },
  { content_type: CSV, extension: 'csv' },
];
