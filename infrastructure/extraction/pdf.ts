// PDF to text with unpdf (pdf.js in a Node-ready build): the text of each page in reading
// order, pages apart by a blank line. A PDF has no headings pdf.js can see; a scanned PDF has no
// text at all, which is an empty answer, not an error (the indexing records what it found).

import { extractText, getDocumentProxy, getResolvedPDFJS } from 'unpdf';
import { UnsupportedDocumentError } from '../../application/ports/text-extractor';
import { tidyText } from './tidy';

/** Loads pdf.js now rather than with the first PDF (about 0.1-0.5 s): a worker does it before it takes documents. */
export async function loadPdfReader(): Promise<void> {
  await getResolvedPDFJS();
}

export async function pdfText(bytes: Buffer): Promise<string> {
  let document: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    // A copy: pdf.js may take over (detach) the buffer it is given.
    // Verbosity 0: pdf.js reports errors (thrown) but prints no warnings to the console.
    document = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0, isEvalSupported: false });
  } catch (error) {
    const name = (error as { name?: string }).name;
    if (name === 'PasswordException') throw new UnsupportedDocumentError('the PDF is password-protected');
    throw new UnsupportedDocumentError(`the PDF could not be read (${name ?? 'unknown error'})`);
  }
  try {
    const { text } = await extractText(document, { mergePages: false });
    return tidyText(text.join('\n\n'));
  } catch (error) {
    throw new UnsupportedDocumentError(`the PDF's text could not be read (${(error as { name?: string }).name ?? 'unknown error'})`);
  } finally {
    await document.destroy();
  }
}
