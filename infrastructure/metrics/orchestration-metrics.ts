// Prometheus metrics of the orchestration dispatcher (issue #14 point 5): attempts, failures,
// dead letters and dispatch latency by event name, reported as they happen; the queue depth by
// status, read from the `orchestration_events` read model when scraped (never polled).
//
// Event names are chosen by the organizations, and every name costs about 37 series (three
// counters, two histograms of 14 buckets): left unbounded, one organization emitting many
// names would grow this process's memory and every scrape without end. So the first
// `maxEventNames` names a process sees get series of their own and later ones are counted
// together as `_other`, which no event can be named (a name starts with a letter). Each name's
// label children are made once and kept: the limit costs one map lookup per report.

import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { OrchestrationMetrics, ScheduleMetrics, ScheduleOutcome } from '../../application/ports/metrics';

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/** The label of the names past the limit. */
export const OTHER_EVENT_NAMES = '_other';

export interface OrchestrationMetricsOptions {
  /** Event names that get series of their own (ORCHESTRATION_METRICS_EVENT_NAMES). */
  maxEventNames: number;
  /** Told once, with the first name counted as `_other`. */
  onLimitReached?: (eventName: string) => void;
}

interface NameSeries {
  attempts: { inc(): void };
  failures: { inc(): void };
  deadLetters: { inc(): void };
  dispatchLatency: { observe(value: number): void };
  endToEndLatency: { observe(value: number): void };
}

export class PrometheusOrchestrationMetrics implements OrchestrationMetrics {
  private readonly attempts: Counter<'event_name'>;
  private readonly failures: Counter<'event_name'>;
  private readonly deadLetters: Counter<'event_name'>;
  private readonly dispatchLatency: Histogram<'event_name'>;
  private readonly endToEndLatency: Histogram<'event_name'>;
  /** The names with series of their own, then `_other` once the limit is reached. */
  private readonly seriesByName = new Map<string, NameSeries>();

  /** `depth` counts the events in a status (queued, failed, dispatched) when scraped. */
  constructor(
    registry: Registry,
    depth: (status: 'queued' | 'failed' | 'dispatched') => Promise<number>,
    private readonly options: OrchestrationMetricsOptions,
  ) {
    const registers = [registry];
    this.attempts = new Counter({ name: 'orchestration_attempts_total', help: 'Dispatch attempts started, by event name', labelNames: ['event_name'], registers });
    this.failures = new Counter({ name: 'orchestration_failures_total', help: 'Dispatch attempts that failed, by event name', labelNames: ['event_name'], registers });
    this.deadLetters = new Counter({ name: 'orchestration_dead_letters_total', help: 'Events dead-lettered, by event name', labelNames: ['event_name'], registers });
    this.dispatchLatency = new Histogram({
      name: 'orchestration_dispatch_latency_seconds',
      help: 'From an event falling due (its delay over, or its retry due) to it being processed, by event name',
      labelNames: ['event_name'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.endToEndLatency = new Histogram({
      name: 'orchestration_processed_latency_seconds',
      help: 'From an event being received to it being processed, by event name',
      labelNames: ['event_name'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    new Gauge({
      name: 'orchestration_queue_depth',
      help: 'Orchestration events waiting (queued, failed with a retry due) or running (dispatched)',
      labelNames: ['status'],
      registers,
      async collect() {
        for (const status of ['queued', 'failed', 'dispatched'] as const) this.set({ status }, await depth(status));
      },
    });
  }

  attemptStarted(eventName: string): void {
    this.series(eventName).attempts.inc();
  }

  attemptFailed(eventName: string, deadLettered: boolean): void {
    const series = this.series(eventName);
    series.failures.inc();
    if (deadLettered) series.deadLetters.inc();
  }

  processed(eventName: string, dispatchSeconds: number, endToEndSeconds: number): void {
    const series = this.series(eventName);
    series.dispatchLatency.observe(dispatchSeconds);
    series.endToEndLatency.observe(endToEndSeconds);
  }

  private series(eventName: string): NameSeries {
    const known = this.seriesByName.get(eventName);
    if (known) return known;
    // `_other` is made with the first name past the limit, so the map never holds it below it.
    if (this.seriesByName.size < this.options.maxEventNames) return this.remember(eventName);
    const other = this.seriesByName.get(OTHER_EVENT_NAMES);
    if (other) return other;
    this.options.onLimitReached?.(eventName);
    return this.remember(OTHER_EVENT_NAMES);
  }

  private remember(label: string): NameSeries {
    const labels = { event_name: label };
    const series: NameSeries = {
      attempts: this.attempts.labels(labels),
      failures: this.failures.labels(labels),
      deadLetters: this.deadLetters.labels(labels),
      dispatchLatency: this.dispatchLatency.labels(labels),
      endToEndLatency: this.endToEndLatency.labels(labels),
    };
    this.seriesByName.set(label, series);
    return series;
  }
}

/** The scheduler's occurrences by outcome, and when it last looked. */
export class PrometheusScheduleMetrics implements ScheduleMetrics {
  private readonly occurrences: Counter<'outcome'>;
  private readonly lastLook: Gauge;

  constructor(registry: Registry) {
    const registers = [registry];
    this.occurrences = new Counter({
      name: 'orchestration_schedule_occurrences_total',
      help: 'Occurrences of SDK connections\' schedules found due, by outcome: emitted, found (emitted already, by another process), refused (by the envelope\'s rules), failed (tried again at the next look)',
      labelNames: ['outcome'],
      registers,
    });
    this.lastLook = new Gauge({ name: 'orchestration_schedule_last_look_seconds', help: 'When the scheduler last looked for occurrences due (Unix time)', registers });
  }

  occurrence(outcome: ScheduleOutcome): void {
    this.occurrences.inc({ outcome });
  }

  looked(at: Date): void {
    this.lastLook.set(at.getTime() / 1000);
  }
}
