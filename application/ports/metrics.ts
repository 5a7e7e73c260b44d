/** What the HTTP edge reports about each request, and how it serves the scrape. */
export interface HttpMetrics {
  observeRequest(method: string, route: string, status: number, seconds: number): void;
  /** The Prometheus exposition: content type and body. */
  render(): Promise<{ contentType: string; body: string }>;
}
