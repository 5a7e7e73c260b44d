/** What the HTTP edge reports about each request, and how it serves the scrape. */
export interface HttpMetrics {
  observeRequest(method: string, route: string, status: number, seconds: number): void;
  /** The Prometheus exposition: content type and body. */
  render(): Promise<{ contentType: string; body: string }>;
}

/** What the orchestration dispatcher reports (issue #14 point 5), by event name. */
export interface OrchestrationMetrics {
  attemptStarted(eventName: string): void;
  /** An attempt failed; `deadLettered` when it was the last one. */
  attemptFailed(eventName: string, deadLettered: boolean): void;
  /** An event processed: from when it was due to its end, and from when it was received. */
  processed(eventName: string, dispatchSeconds: number, endToEndSeconds: number): void;
}

/** How one occurrence of a schedule went: its event made, found made already (by another process), refused by the envelope's rules, or not emitted (tried again). */
export type ScheduleOutcome = 'emitted' | 'found' | 'refused' | 'failed';

/** What the schedules' scheduler reports (application/orchestration/schedules.ts). */
export interface ScheduleMetrics {
  occurrence(outcome: ScheduleOutcome): void;
  /** A look ended at `at` (with or without failures): an alert on its age finds a scheduler that stopped. */
  looked(at: Date): void;
}

/** What /ws/chat reports (issue #15): connections, frames, closes, turns' first delta, backpressure. */
export interface WidgetSocketMetrics {
  /** A socket was accepted (before its token is checked: refusals are accepted, then closed with a code). */
  opened(): void;
  /** A socket ends: the code this side closes with, when it starts the close (1006: terminated); else the client's, once closed. */
  closed(code: number): void;
  /** A client frame of a known type (`invalid` for one that was not). */
  received(type: string): void;
  /** A server frame. */
  sent(type: string): void;
  /** From a `message` frame's arrival to its answer's first delta frame. */
  firstDelta(seconds: number): void;
  /** A turn stopped pulling its answer because the socket's buffer passed the high-water mark. */
  backpressured(): void;
  /** Read when scraped: sockets open now, waiting on backpressure now, and the largest buffer. */
  observe(state: () => { open: number; waiting: number; max_buffered_bytes: number }): void;
}
