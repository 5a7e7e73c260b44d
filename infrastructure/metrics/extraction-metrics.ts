// Prometheus metrics of document text extraction (knowledge indexing, WhatsApp documents):
// documents by outcome, how long each took (waiting for a worker included), and the documents
// being read and waiting now, read from the extractor when scraped.

import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { ExtractionOutcome } from '../extraction/threaded-text-extractor';

const SECONDS_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

export class PrometheusExtractionMetrics {
  private readonly documents: Counter<'outcome'>;
  private readonly seconds: Histogram<'outcome'>;

  constructor(registry: Registry, load: () => { running: number; waiting: number }) {
    const registers = [registry];
    this.documents = new Counter({
      name: 'text_extractions_total',
      help: 'Documents whose text was read, by outcome (read, unsupported, timed_out, out_of_memory, failed)',
      labelNames: ['outcome'],
      registers,
    });
    this.seconds = new Histogram({ name: 'text_extraction_seconds', help: "How long reading a document's text took, waiting for a worker included, by outcome", labelNames: ['outcome'], buckets: SECONDS_BUCKETS, registers });
    new Gauge({
      name: 'text_extractions_running',
      help: 'Documents being read on the extraction workers now',
      registers,
      collect() {
        this.set(load().running);
      },
    });
    new Gauge({
      name: 'text_extractions_waiting',
      help: 'Documents waiting for an extraction worker now',
      registers,
      collect() {
        this.set(load().waiting);
      },
    });
  }

  observe(outcome: ExtractionOutcome, seconds: number): void {
    this.documents.inc({ outcome });
    this.seconds.observe({ outcome }, seconds);
  }
}
