// Prometheus metrics of the orchestration dispatcher (issue #14 point 5): attempts, failures,
// dead letters and dispatch latency by event name, reported as they happen; the queue depth by
// status, read from the `orchestration_events` read model when scraped (never polled).

import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { OrchestrationMetrics } from '../../application/ports/metrics';

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

export class PrometheusOrchestrationMetrics implements OrchestrationMetrics {
  private readonly attempts: Counter<'event_name'>;
  private readonly failures: Counter<'event_name'>;
  private readonly deadLetters: Counter<'event_name'>;
  private readonly dispatchLatency: Histogram<'event_name'>;
  private readonly endToEndLatency: Histogram<'event_name'>;

  /** `depth` counts the events in a status (queued, failed, dispatched) when scraped. */
  constructor(registry: Registry, depth: (status: 'queued' | 'failed' | 'dispatched') => Promise<number>) {
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
    this.attempts.inc({ event_name: eventName });
  }

  attemptFailed(eventName: string, deadLettered: boolean): void {
    this.failures.inc({ event_name: eventName });
    if (deadLettered) this.deadLetters.inc({ event_name: eventName });
  }

  processed(eventName: string, dispatchSeconds: number, endToEndSeconds: number): void {
    this.dispatchLatency.observe({ event_name: eventName }, dispatchSeconds);
    this.endToEndLatency.observe({ event_name: eventName }, endToEndSeconds);
  }
}
