// Documents read on worker threads (infrastructure/extraction/threaded-text-extractor.ts): the
// serving thread goes on while a large PDF is read; a document that takes too long or needs too
// much memory is refused and its worker replaced; a worker that fails fails its document with
// an error the indexing saga retries; documents beyond the workers wait their turn. What is
// read is the same as on the calling thread (text-extraction.test.ts runs both).

import { expect } from 'chai';
import path from 'node:path';
import { UnsupportedDocumentError } from '../../application/ports/text-extractor';
import { PDF, PLAIN_TEXT } from '../../application/document/document-types';
import { DocumentTextExtractor } from '../../infrastructure/extraction/document-text-extractor';
import { type ExtractionOutcome, type ThreadedExtractionOptions, ThreadedTextExtractor } from '../../infrastructure/extraction/threaded-text-extractor';
import { pdfOf, pdfOfPages } from '../support/documents';

const CRASHING_WORKER = path.join(__dirname, '../support/crashing-extraction-worker.js');
const NO_PDF_READER_WORKER = path.join(__dirname, '../support/no-pdf-reader-extraction-worker.js');

describe('text extraction on worker threads', () => {
  let extractor: ThreadedTextExtractor;
  let outcomes: ExtractionOutcome[];
  const start = (options: Partial<ThreadedExtractionOptions> = {}): ThreadedTextExtractor => {
    outcomes = [];
    extractor = new ThreadedTextExtractor({ maxWorkers: 1, timeoutMs: 60_000, maxHeapMb: 512, observe: (outcome) => outcomes.push(outcome), ...options });
    return extractor;
  };
  afterEach(() => extractor.close());

  /** How often the calling thread's event loop turned while `work` ran. */
  async function turnsDuring(work: Promise<unknown>): Promise<number> {
    let turns = 0;
    let running = true;
    const turn = (): void => {
      turns += 1;
      if (running) setImmediate(turn);
    };
    setImmediate(turn);
    try {
      await work;
    } finally {
      running = false;
    }
    return turns;
  }

  it('keeps the calling thread free while a large PDF is read (on the calling thread it is held throughout)', async () => {
    const large = pdfOfPages(150, 60);
    const inProcess = new DocumentTextExtractor();
    // pdf.js loaded first: loading it is file reads, during which the loop turns.
    await inProcess.extract(pdfOf(['warm-up']), PDF);
    const onTheCallingThread = await turnsDuring(inProcess.extract(large, PDF));
    start();
    let text = '';
    const onAWorker = await turnsDuring(extractor.extract(large, PDF).then((read) => (text = read)));
    expect(text).to.contain('Page 150, line 60: items can be returned within thirty days');
    expect(onTheCallingThread).to.be.below(5);
    expect(onAWorker).to.be.above(50);
    expect(outcomes).to.deep.equal(['read']);
  });

  it('refuses a document that takes longer than the limit, and reads the next on a new worker', async () => {
    start({ timeoutMs: 1000 });
    // The next is a PDF too: the new worker loads pdf.js before it takes it, so its second is for reading it.
    const [slow, next] = await Promise.allSettled([extractor.extract(pdfOfPages(2000, 60), PDF), extractor.extract(pdfOf(['Opening hours: nine to five.']), PDF)]);
    expect(slow.status).to.equal('rejected');
    const refusal = (slow as PromiseRejectedResult).reason as Error;
    expect(refusal).to.be.instanceOf(UnsupportedDocumentError);
    expect(refusal.message).to.equal('the document took longer than 1 s to read');
    expect(next).to.deep.equal({ status: 'fulfilled', value: 'Opening hours: nine to five.' });
    expect(outcomes).to.deep.equal(['timed_out', 'read']);
  });

  it('refuses a document whose reading needs more memory than the limit, and goes on', async () => {
    start({ maxHeapMb: 32 });
    const error = await extractor.extract(pdfOfPages(1000, 60), PDF).then(
      () => null,
      (thrown: unknown) => thrown,
    );
    expect(error).to.be.instanceOf(UnsupportedDocumentError);
    expect((error as Error).message).to.equal('the document needs more than 32 MiB of memory to read');
    expect(await extractor.extract(Buffer.from('Still reading.'), PLAIN_TEXT)).to.equal('Still reading.');
    expect(outcomes).to.deep.equal(['out_of_memory', 'read']);
  });

  it('starts a worker whose pdf.js cannot load: it refuses each PDF as it reads it, and reads the other types', async () => {
    start({ workerScript: NO_PDF_READER_WORKER, timeoutMs: 10_000 });
    const refusal = await extractor.extract(pdfOf(['Opening hours: nine to five.']), PDF).then(
      () => null,
      (thrown: unknown) => thrown,
    );
    expect(refusal).to.be.instanceOf(UnsupportedDocumentError);
    expect((refusal as Error).message).to.equal('the PDF could not be read (ModuleLoadError)');
    expect(await extractor.extract(Buffer.from('Still reading text.'), PLAIN_TEXT)).to.equal('Still reading text.');
    expect(outcomes).to.deep.equal(['unsupported', 'read']);
  });

  it('fails a document whose worker fails with a plain error (to be retried), and goes on', async () => {
    start({ workerScript: CRASHING_WORKER });
    const error = await extractor.extract(Buffer.from('crash'), PLAIN_TEXT).then(
      () => null,
      (thrown: unknown) => thrown,
    );
    expect(error).to.be.instanceOf(Error);
    expect(error).to.not.be.instanceOf(UnsupportedDocumentError);
    expect((error as Error).message).to.equal('a parser bug');
    expect(await extractor.extract(Buffer.from('After the crash.'), PLAIN_TEXT)).to.equal('After the crash.');
    expect(outcomes).to.deep.equal(['failed', 'read']);
  });

  it('reads more documents at once than it has workers, each answered with its own text', async () => {
    start({ maxWorkers: 2 });
    const texts = ['one', 'two', 'three', 'four', 'five'].map((word) => `Document ${word}.`);
    const read = await Promise.all(texts.map((text, index) => (index % 2 === 0 ? extractor.extract(pdfOf([text]), PDF) : extractor.extract(Buffer.from(text), PLAIN_TEXT))));
    expect(read).to.deep.equal(texts);
    expect(extractor.load()).to.deep.equal({ running: 0, waiting: 0 });
  });

  it('refuses documents once closed, those waiting for a worker included', async () => {
    start();
    const reading = extractor.extract(pdfOfPages(300, 60), PDF);
    const waiting = extractor.extract(Buffer.from('waiting'), PLAIN_TEXT);
    const settled = Promise.allSettled([reading, waiting]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(extractor.load()).to.deep.equal({ running: 1, waiting: 1 });
    await extractor.close();
    const [first, second] = await settled;
    expect(first.status).to.equal('rejected');
    expect(second.status).to.equal('rejected');
    expect(((second as PromiseRejectedResult).reason as Error).message).to.equal('the text extractor is closed');
    const after = await extractor.extract(Buffer.from('x'), PLAIN_TEXT).then(
      () => null,
      (thrown: unknown) => thrown as Error,
    );
    expect(after?.message).to.equal('the text extractor is closed');
  });
});
