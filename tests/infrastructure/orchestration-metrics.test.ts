import { expect } from 'chai';
import { Registry } from 'prom-client';
import { OTHER_EVENT_NAMES, PrometheusOrchestrationMetrics } from '../../infrastructure/metrics/orchestration-metrics';

describe('orchestration metrics (Prometheus)', () => {
  const depths = { queued: 3, failed: 1, dispatched: 2 };
  const metricsWith = (maxEventNames: number, onLimitReached?: (eventName: string) => void) => {
    const registry = new Registry();
    const metrics = new PrometheusOrchestrationMetrics(registry, async (status) => depths[status], { maxEventNames, onLimitReached });
    /** The value of one series in the scrape; undefined when it is not there. */
    const value = async (series: string): Promise<number | undefined> => {
      const line = (await registry.metrics()).split('\n').find((candidate) => candidate.startsWith(`${series} `));
      return line === undefined ? undefined : Number(line.slice(series.length + 1));
    };
    const eventNames = async (): Promise<string[]> => {
      const names = new Set<string>();
      for (const match of (await registry.metrics()).matchAll(/event_name="([^"]+)"/g)) names.add(match[1]!);
      return [...names].sort();
    };
    return { metrics, value, eventNames };
  };

  it('counts attempts, failures, dead letters and latencies by event name, and reads the queue depth when scraped', async () => {
    const { metrics, value } = metricsWith(10);
    metrics.attemptStarted('shop.order.created');
    metrics.attemptStarted('shop.order.created');
    metrics.attemptFailed('shop.order.created', false);
    metrics.attemptFailed('shop.order.created', true);
    metrics.attemptStarted('crm.contact.updated');
    metrics.processed('crm.contact.updated', 0.02, 0.3);

    expect(await value('orchestration_attempts_total{event_name="shop.order.created"}')).to.equal(2);
    expect(await value('orchestration_failures_total{event_name="shop.order.created"}')).to.equal(2);
    expect(await value('orchestration_dead_letters_total{event_name="shop.order.created"}')).to.equal(1);
    expect(await value('orchestration_attempts_total{event_name="crm.contact.updated"}')).to.equal(1);
    expect(await value('orchestration_dead_letters_total{event_name="crm.contact.updated"}')).to.equal(undefined);
    expect(await value('orchestration_dispatch_latency_seconds_bucket{le="0.025",event_name="crm.contact.updated"}')).to.equal(1);
    expect(await value('orchestration_dispatch_latency_seconds_bucket{le="0.01",event_name="crm.contact.updated"}')).to.equal(0);
    expect(await value('orchestration_processed_latency_seconds_sum{event_name="crm.contact.updated"}')).to.equal(0.3);
    expect(await value('orchestration_queue_depth{status="queued"}')).to.equal(3);
    expect(await value('orchestration_queue_depth{status="failed"}')).to.equal(1);
    expect(await value('orchestration_queue_depth{status="dispatched"}')).to.equal(2);
  });

  it('gives the first names their own series and counts every later one as _other, telling the limit once', async () => {
    const told: string[] = [];
    const { metrics, value, eventNames } = metricsWith(2, (eventName) => told.push(eventName));
    for (let index = 0; index < 50; index += 1) {
      metrics.attemptStarted(`shop.order.step_${index}`);
      metrics.processed(`shop.order.step_${index}`, 0.001, 0.001);
    }
    // A name that had its series before the limit keeps it.
    metrics.attemptStarted('shop.order.step_1');
    metrics.attemptFailed('shop.order.step_7', true);

    expect(await eventNames()).to.deep.equal([OTHER_EVENT_NAMES, 'shop.order.step_0', 'shop.order.step_1']);
    expect(await value('orchestration_attempts_total{event_name="shop.order.step_0"}')).to.equal(1);
    expect(await value('orchestration_attempts_total{event_name="shop.order.step_1"}')).to.equal(2);
    expect(await value(`orchestration_attempts_total{event_name="${OTHER_EVENT_NAMES}"}`)).to.equal(48);
    expect(await value(`orchestration_processed_latency_seconds_count{event_name="${OTHER_EVENT_NAMES}"}`)).to.equal(48);
    expect(await value(`orchestration_dead_letters_total{event_name="${OTHER_EVENT_NAMES}"}`)).to.equal(1);
    expect(told).to.deep.equal(['shop.order.step_2']);
  });

  it('with a limit of 0 counts every name as _other', async () => {
    const { metrics, value, eventNames } = metricsWith(0);
    metrics.attemptStarted('shop.order.created');
    metrics.attemptStarted('shop.order.paid');
    expect(await eventNames()).to.deep.equal([OTHER_EVENT_NAMES]);
    expect(await value(`orchestration_attempts_total{event_name="${OTHER_EVENT_NAMES}"}`)).to.equal(2);
  });
});
