// DOCX to text with mammoth: the document becomes HTML (paragraph styles "Heading 1" ... as
// <h1> ...), which html.ts turns into text with headings as lines of their own. Images are left
// out. Before anything is unpacked, the archive's own table of contents says how large it
// would be: a DOCX that unpacks to more than MAX_UNPACKED_BYTES (a ZIP bomb) is refused.

import mammoth from 'mammoth';
import { UnsupportedDocumentError } from '../../application/ports/text-extractor';
import { htmlText } from './html';
import { zipEntries } from './zip';

/** A large report with many pictures unpacks to tens of megabytes; its text is far less. */
export const MAX_UNPACKED_BYTES = 256 * 1024 * 1024;

export async function docxText(bytes: Buffer): Promise<string> {
  const entries = zipEntries(bytes);
  if (!entries || !entries.some((entry) => entry.name === 'word/document.xml')) throw new UnsupportedDocumentError('the file is not a DOCX document');
  const unpacked = entries.reduce((sum, entry) => sum + entry.uncompressedBytes, 0);
  if (unpacked > MAX_UNPACKED_BYTES) throw new UnsupportedDocumentError(`the DOCX would unpack to ${unpacked} bytes, more than ${MAX_UNPACKED_BYTES}`);
  let html: string;
  try {
    const result = await mammoth.convertToHtml({ buffer: bytes }, { convertImage: mammoth.images.imgElement(async () => ({ src: '' })) });
    html = result.value;
  } catch (error) {
    throw new UnsupportedDocumentError(`the DOCX could not be read (${error instanceof Error ? error.message.slice(0, 200) : 'unknown error'})`);
  }
  return htmlText(html);
}
