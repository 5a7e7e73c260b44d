// Prometheus metrics of /ws/chat (issue #15): sockets open, frames by direction and type, close
// codes, the time from a visitor's message to its answer's first delta, and backpressure
// (turns that stopped pulling their answer; sockets waiting and the largest buffer, read when
// scraped). A delta frame is counted on every piece of an answer, so each label's child
// counter is looked up once and kept, rather than hashing the labels on every frame.

import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { WidgetSocketMetrics } from '../../application/ports/metrics';

const FIRST_DELTA_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export class PrometheusWidgetSocketMetrics implements WidgetSocketMetrics {
  private readonly opens: Counter;
  private readonly closes: Counter<'code'>;
  private readonly frames: Counter<'direction' | 'type'>;
  private readonly firstDeltas: Histogram;
  private readonly backpressures: Counter;
  private readonly children = new Map<string, { inc(): void }>();
  private state: () => { open: number; waiting: number; max_buffered_bytes: number } = () => ({ open: 0, waiting: 0, max_buffered_bytes: 0 });

  constructor(registry: Registry) {
    const registers = [registry];
    this.opens = new Counter({ name: 'widget_ws_connections_opened_total', help: 'WebSocket connections accepted on /ws/chat (refused ones included: they are closed with a code)', registers });
    this.closes = new Counter({ name: 'widget_ws_closes_total', help: 'WebSocket connections of /ws/chat ended, by close code (1006: terminated without a close frame)', labelNames: ['code'], registers });
    this.frames = new Counter({ name: 'widget_ws_messages_total', help: 'JSON frames of /ws/chat, by direction (in, out) and type', labelNames: ['direction', 'type'], registers });
    this.firstDeltas = new Histogram({ name: 'widget_ws_first_delta_seconds', help: "From a visitor's message frame to its answer's first delta frame", buckets: FIRST_DELTA_BUCKETS, registers });
    this.backpressures = new Counter({ name: 'widget_ws_backpressure_total', help: "Times a turn stopped pulling its answer because the socket's buffer passed the high-water mark", registers });
    const current = (): { open: number; waiting: number; max_buffered_bytes: number } => this.state();
    new Gauge({
      name: 'widget_ws_connections',
      help: 'WebSocket connections of /ws/chat open now',
      registers,
      collect() {
        this.set(current().open);
      },
    });
    new Gauge({
      name: 'widget_ws_backpressure_waiting',
      help: 'Connections of /ws/chat whose turn waits for the client to read (buffer over the high-water mark)',
      registers,
      collect() {
        this.set(current().waiting);
      },
    });
    new Gauge({
      name: 'widget_ws_max_buffered_bytes',
      help: 'The largest send buffer of any /ws/chat connection now, in bytes',
      registers,
      collect() {
        this.set(current().max_buffered_bytes);
      },
    });
  }

  private child(direction: 'in' | 'out', type: string): { inc(): void } {
    const key = `${direction} ${type}`;
    let child = this.children.get(key);
    if (!child) {
      child = this.frames.labels({ direction, type });
      this.children.set(key, child);
    }
    return child;
  }

  opened(): void {
    this.opens.inc();
  }

  closed(code: number): void {
    this.closes.inc({ code: String(code) });
  }

  received(type: string): void {
    this.child('in', type).inc();
  }

  sent(type: string): void {
    this.child('out', type).inc();
  }

  firstDelta(seconds: number): void {
    this.firstDeltas.observe(seconds);
  }

  backpressured(): void {
    this.backpressures.inc();
  }

  observe(state: () => { open: number; waiting: number; max_buffered_bytes: number }): void {
    this.state = state;
  }
}
