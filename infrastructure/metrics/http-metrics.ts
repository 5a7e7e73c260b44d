// HTTP request metrics kept in plain arrays and written in the Prometheus text format at
// scrape time. prom-client hashes the label object of every observation, which on a small
// request costs more than the request's own bookkeeping; here an observation is one map
// lookup and one bucket increment.

const BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

interface RouteSeries {
  method: string;
  route: string;
  /** Non-cumulative: observations that fell in each bucket, plus one past the last. */
  buckets: number[];
  sum: number;
  count: number;
  statuses: Map<number, number>;
}

const escapeLabel = (value: string): string => value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

export class HttpRequestMetrics {
  private readonly series = new Map<string, RouteSeries>();

  observe(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${route}`;
    let series = this.series.get(key);
    if (!series) {
      series = { method, route, buckets: new Array<number>(BUCKETS.length + 1).fill(0), sum: 0, count: 0, statuses: new Map() };
      this.series.set(key, series);
    }
    let bucket = 0;
    while (bucket < BUCKETS.length && seconds > BUCKETS[bucket]) bucket += 1;
    series.buckets[bucket] += 1;
    series.sum += seconds;
    series.count += 1;
    series.statuses.set(status, (series.statuses.get(status) ?? 0) + 1);
  }

  /** `http_requests_total` and `http_request_duration_seconds` in the text exposition format. */
  render(): string {
    const lines = [
      '# HELP http_requests_total HTTP requests by method, route and status',
      '# TYPE http_requests_total counter',
    ];
    for (const series of this.series.values()) {
      for (const [status, count] of series.statuses) {
        lines.push(`http_requests_total{method="${escapeLabel(series.method)}",route="${escapeLabel(series.route)}",status="${status}"} ${count}`);
      }
    }
    lines.push('# HELP http_request_duration_seconds HTTP request duration', '# TYPE http_request_duration_seconds histogram');
    for (const series of this.series.values()) {
      const labels = `method="${escapeLabel(series.method)}",route="${escapeLabel(series.route)}"`;
      let cumulative = 0;
      BUCKETS.forEach((bound, index) => {
        cumulative += series.buckets[index];
        lines.push(`http_request_duration_seconds_bucket{le="${bound}",${labels}} ${cumulative}`);
      });
      lines.push(`http_request_duration_seconds_bucket{le="+Inf",${labels}} ${series.count}`);
      lines.push(`http_request_duration_seconds_sum{${labels}} ${series.sum}`);
      lines.push(`http_request_duration_seconds_count{${labels}} ${series.count}`);
    }
    return `${lines.join('\n')}\n`;
  }
}
