// Prometheus metrics through prom-client: HTTP traffic, event-store appends and reads, and
// projection checkpoints and lag (read from the runner when scraped, never polled).

import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { HttpMetrics } from '../../application/ports/metrics';
import type {
  AppendResult,
  EventStore,
  EventSubscription,
  ExpectedRevision,
  NewEvent,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  StreamMetadata,
  SubscribeToAllOptions,
  StreamAppend,
} from '../../application/ports/event-store';
import { WrongExpectedRevisionError } from '../../application/ports/event-store';
import type { ProjectionReport } from '../../projections/runner';
import { HttpRequestMetrics } from './http-metrics';

export class PlatformMetrics implements HttpMetrics {
  readonly registry = new Registry();
  private readonly http = new HttpRequestMetrics();
  readonly appendedEvents = new Counter({ name: 'eventstore_appended_events_total', help: 'Events appended', registers: [this.registry] });
  readonly appendConflicts = new Counter({ name: 'eventstore_append_conflicts_total', help: 'Appends refused for a wrong expected revision', registers: [this.registry] });
  readonly appendDuration = new Histogram({
    name: 'eventstore_append_duration_seconds',
    help: 'Time from append to durable acknowledgement',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [this.registry],
  });
  readonly readEvents = new Counter({ name: 'eventstore_read_events_total', help: 'Events read', labelNames: ['source'], registers: [this.registry] });
  /** The two series of readEvents, looked up once: every command's stream read counts. */
  readonly readFromStreams = this.readEvents.labels({ source: 'stream' });
  readonly readFromAll = this.readEvents.labels({ source: 'all' });

  constructor(projectionStatus: () => Promise<ProjectionReport[]>) {
    collectDefaultMetrics({ register: this.registry });
    // prom-client collects every metric of a scrape at once; they share one status read.
    let pending: { at: number; reports: Promise<ProjectionReport[]> } | null = null;
    const reportsOfThisScrape = (): Promise<ProjectionReport[]> => {
      const now = Date.now();
      if (!pending || now - pending.at > 250) pending = { at: now, reports: projectionStatus() };
      return pending.reports;
    };
    const perProjection = (name: string, help: string, value: (report: ProjectionReport) => number): void => {
      new Gauge({
        name,
        help,
        labelNames: ['projection'],
        registers: [this.registry],
        async collect() {
          for (const report of await reportsOfThisScrape()) this.set({ projection: report.name }, value(report));
        },
      });
    };
    perProjection('projection_lag_events', 'Positions of $all a projection is behind the head', (report) => report.lag);
    perProjection('projection_checkpoint_position', 'Last position of $all a projection has passed', (report) => report.checkpoint);
    perProjection('projection_failed', '1 when a projection is failing', (report) => (report.status === 'failed' ? 1 : 0));
    new Gauge({
      name: 'eventstore_head_position',
      help: 'Position of the last event in $all',
      registers: [this.registry],
      async collect() {
        this.set((await reportsOfThisScrape())[0]?.head ?? 0);
      },
    });
  }

  observeRequest(method: string, route: string, status: number, seconds: number): void {
    this.http.observe(method, route, status, seconds);
  }

  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: `${await this.registry.metrics()}\n${this.http.render()}` };
  }
}

/** Counts and times what passes through an event store, whatever its engine. */
export class InstrumentedEventStore implements EventStore {
  constructor(
    private readonly inner: EventStore,
    private readonly metrics: PlatformMetrics,
  ) {}

  appendToStream(stream: string, events: readonly NewEvent[], options?: { expectedRevision?: ExpectedRevision }): Promise<AppendResult> {
    return this.counted(events.length, () => this.inner.appendToStream(stream, events, options));
  }

  appendToStreams(appends: readonly StreamAppend[]): Promise<AppendResult[]> {
    return this.counted(
      appends.reduce((count, append) => count + append.events.length, 0),
      () => this.inner.appendToStreams(appends),
    );
  }

  /** An append timed, its events counted once it is acknowledged, its conflict counted. */
  private async counted<Result>(events: number, append: () => Promise<Result>): Promise<Result> {
    const stop = this.metrics.appendDuration.startTimer();
    try {
      const result = await append();
      this.metrics.appendedEvents.inc(events);
      return result;
    } catch (error) {
      if (error instanceof WrongExpectedRevisionError) this.metrics.appendConflicts.inc();
      throw error;
    } finally {
      stop();
    }
  }

  async readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    const events = await this.inner.readStream(stream, options);
    this.metrics.readFromStreams.inc(events.length);
    return events;
  }

  async readAll(options?: ReadAllOptions): Promise<RecordedEvent[]> {
    const events = await this.inner.readAll(options);
    this.metrics.readFromAll.inc(events.length);
    return events;
  }

  subscribeToAll(options: SubscribeToAllOptions): EventSubscription {
    return this.inner.subscribeToAll(options);
  }

  headPosition(): Promise<number> {
    return this.inner.headPosition();
  }

  streamRevision(stream: string): Promise<number | null> {
    return this.inner.streamRevision(stream);
  }

  deleteStream(stream: string, options?: { expectedRevision?: ExpectedRevision }): Promise<void> {
    return this.inner.deleteStream(stream, options);
  }

  getStreamMetadata(stream: string): Promise<StreamMetadata> {
    return this.inner.getStreamMetadata(stream);
  }

  setStreamMetadata(stream: string, metadata: StreamMetadata): Promise<void> {
    return this.inner.setStreamMetadata(stream, metadata);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
