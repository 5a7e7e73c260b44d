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
