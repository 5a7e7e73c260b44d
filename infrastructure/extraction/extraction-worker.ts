// The worker thread of ThreadedTextExtractor (threaded-text-extractor.ts): reads the text of one
// document at a time with the platform's extractor and posts it back. A document it cannot read
// comes back as a refusal (`unsupported`), anything else as a failure the caller may retry.
// pdf.js is loaded before the worker says it is ready, so that a document's time limit is for
// reading it, not for loading the reader too (a first PDF timed out under load for that alone).

import { parentPort } from 'node:worker_threads';
import { UnsupportedDocumentError } from '../../application/ports/text-extractor';
import { messageOf } from '../../domain/shared/errors';
import { WORKER_READY } from '../workers/worker-pool';
import { DocumentTextExtractor } from './document-text-extractor';
import { loadPdfReader } from './pdf';

export interface ExtractionRequest {
  bytes: Uint8Array;
  contentType: string;
}

export type ExtractionAnswer = { ok: true; text: string } | { ok: false; unsupported: boolean; message: string };

if (parentPort) {
  const port = parentPort;
  const extractor = new DocumentTextExtractor();
  port.on('message', (request: ExtractionRequest) => {
    const bytes = Buffer.from(request.bytes.buffer, request.bytes.byteOffset, request.bytes.byteLength);
    extractor.extract(bytes, request.contentType).then(
      (text) => port.postMessage({ ok: true, text } satisfies ExtractionAnswer),
      (error: unknown) => port.postMessage({ ok: false, unsupported: error instanceof UnsupportedDocumentError, message: messageOf(error) } satisfies ExtractionAnswer),
    );
  });
  const ready = (): void => port.postMessage(WORKER_READY);
  // Ready either way: were pdf.js not to load, each PDF would fail as it is read, and the other types are read all the same.
  void loadPdfReader().then(ready, ready);
}
