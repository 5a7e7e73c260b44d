// An extraction worker for tests of ThreadedTextExtractor: reads documents as the platform's
// does, except that the bytes `crash` make its thread fail with an uncaught error, as a bug in
// a parser would.

import { parentPort } from 'node:worker_threads';
import { WORKER_READY } from '../../infrastructure/workers/worker-pool';
import { DocumentTextExtractor } from '../../infrastructure/extraction/document-text-extractor';
import type { ExtractionAnswer, ExtractionRequest } from '../../infrastructure/extraction/extraction-worker';

if (parentPort) {
  const port = parentPort;
  const extractor = new DocumentTextExtractor();
  port.on('message', (request: ExtractionRequest) => {
    const bytes = Buffer.from(request.bytes);
    if (bytes.toString() === 'crash') {
      setImmediate(() => {
        throw new Error('a parser bug');
      });
      return;
    }
    void extractor.extract(bytes, request.contentType).then((text) => port.postMessage({ ok: true, text } satisfies ExtractionAnswer));
  });
  port.postMessage(WORKER_READY);
}
