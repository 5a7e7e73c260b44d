// `npm run bench -- events [--events N] [--concurrency N] [--warmup N] [--rate R] [--platform-only]`:
// orchestration events
// end to end (issue #14: at least 1,000 events/s emitted-to-processed with a local connector,
// on the embedded store).
//
// Set-up, as a user would: the platform on the embedded store in a temporary data folder,
// started (projections, sagas, the dispatcher) in this process; the example connector
// (adapters/connector-sdk/example) listening on 127.0.0.1 in a child process
// (bench/_events-outside.ts), as an organization runs its own connector server; an organization
// on the premium plan whose SDK connection to it is created, enabled and synced through the
// API, so the dispatcher finds the advertised `prepare_order` flow (one step: the connector's
// `notify_warehouse`; one follow-on event: `shop.order.prepared`).
//
// Each section emits N `shop.order.created` events (a distinct order each) from `concurrency`
// emitters in a closed loop, and times each event from the moment its emit is answered (it is
// stored and queued) to the moment its `OrchestrationEventProcessed` is in the store (read
// from a subscription to $all; the flow's signed call to the connector and its follow-on
// event's emit are done by then). Throughput: N over the wall time from the first emit to the
// last processed. Latency percentiles: emitted -> processed. The producers outrun the
// dispatcher there, so those latencies are mostly the backlog's. Each section also reports
// this process's CPU per event and how busy its main thread was (event-loop utilization): near
// 100 % the serving thread is the limit, whatever the other threads and cores have left. Where
// Linux says (/proc/self/task/<pid>/schedstat), it also reports how much of the section that
// thread was on a core and how much it waited for one: a busy loop is not all CPU, and on a
// machine with few cores its threads and the producers take turns.
//
// Latency at a load (`--rate R`, default 250 events/s): the producers send at R events/s
// whatever the answers do (paced, open loop, at most 256 in flight), over HTTP, to the bare
// queue and to the platform; each event is timed from the moment it was due to be sent to the
// moment it is processed, so a server falling behind shows in the numbers.
// - HTTP: `POST /api/v1/org/events` with the owner's token, as producers do, from the same
//   child process: a producer runs outside the platform, so its HTTP client's work is not
//   the platform's. Times are wall-clock milliseconds with the monotonic clock's resolution
//   (performance.timeOrigin + performance.now()), comparable across the two processes.
// - use case: emitOrchestrationEvent in process (no HTTP), what the route calls.
//
// The reference is a bare loop doing the work every event requires without the platform: one
// signed `tool.invoke` of `notify_warehouse` on the same connector per event, through the
// SDK's callConnector, `concurrency` at once. It stores nothing, so it is the ceiling: what
// the connector and the signing cost. No target on the ratio; the target is on the
// platform's own events/s. Nothing is asserted: the numbers go to docs/performance.md.

import { type ChildProcess, fork } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { callConnector, PROTOCOL_VERSION } from '../adapters/connector-sdk';
import { startBareQueue } from './_events-bare';
import { Arrivals, wallClockMs } from './_events-clock';
import type { OutsideMessage, OutsideRequest } from './_events-outside';
import { handleCommand } from '../application/command-handling/handle-command';
import { emitOrchestrationEvent } from '../application/orchestration/orchestration-events';
import { seedPlanCatalogue } from '../application/plan/plans';
import { silentLogger } from '../application/ports/logger';
import { register } from '../application/registration/register';
import { login } from '../application/session/login';
import type { Principal } from '../application/session/sessions';
import { systemContext } from '../application/shared/request-context';
import { activateSubscription } from '../application/subscription/subscriptions';
import { userAggregate } from '../application/user/users';
import { userStream } from '../domain/user/user';
import { type Platform, createPlatform, loadConfig } from '../infrastructure/composition-root';

const SECRET = 'ssec_bench-events-secret-0123456789abcdef';
const PASSWORD = 'bench password 123';

interface Options {
  events: number;
  concurrency: number;
  warmup: number;
  /** Events per second of the paced sections (latency at a load). */
  rate: number;
  /** Only the platform's two sections (for profiling it: `node --cpu-prof`). */
  platformOnly: boolean;
}

function parseOptions(args: string[]): Options {
  const read = (name: string, fallback: number): number => {
    const at = args.indexOf(`--${name}`);
    return at >= 0 ? Number(args[at + 1]) : fallback;
  };
  const options = { events: read('events', 3000), concurrency: read('concurrency', 32), warmup: read('warmup', 3000), rate: read('rate', 250), platformOnly: args.includes('--platform-only') };
  for (const name of ['events', 'concurrency', 'rate'] as const) {
    if (!(options[name] > 0)) throw new Error(`--${name}: expected a number above 0`);
  }
  return options;
}

interface Measurement {
  name: string;
  events: number;
  seconds: number;
  /** emitted -> processed (reference: per call), ms, sorted. */
  latencies: number[];
  /** This process's CPU time (user + system) over the section, ms: the platform's, and the bench's bookkeeping. */
  cpuMs: number;
  /** The outside process's, over its emits (HTTP sections): the producers and the connector. */
  outsideCpuMs?: number;
  /** The share of the section this process's main thread (serving HTTP, dispatching, committing) was busy: its event-loop utilization. */
  loopBusy: number;
  /** The kernel's count of that thread over the section: the share on a core and the share waiting for one; null where it does not say. */
  scheduled: { onCore: number; waiting: number } | null;
}

/** The main thread's time on a core and waiting for one, in seconds (Linux: its tid is the pid); null elsewhere. */
function mainThreadSchedule(): { onCore: number; waiting: number } | null {
  try {
    const [onCore, waiting] = fs.readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').trim().split(/\s+/).map(Number);
    return Number.isFinite(onCore) && Number.isFinite(waiting) ? { onCore: onCore / 1e9, waiting: waiting / 1e9 } : null;
  } catch {
    return null;
  }
}

const cpuMsSince = (from: NodeJS.CpuUsage): number => {
  const used = process.cpuUsage(from);
  return (used.user + used.system) / 1000;
};

/**
 * What a section cost this process: its CPU, and how busy its main thread's event loop was.
 * The loop's utilization tells a serving thread at its limit (near 1: the other threads and
 * cores cannot help it) from one waiting on something else.
 */
function sectionMeter(): () => { cpuMs: number; loopBusy: number; scheduled: Measurement['scheduled'] } {
  const cpu = process.cpuUsage();
  const loop = performance.eventLoopUtilization();
  const schedule = mainThreadSchedule();
  const started = performance.now();
  return () => {
    const seconds = (performance.now() - started) / 1000;
    const now = mainThreadSchedule();
    const scheduled = schedule && now && seconds > 0 ? { onCore: (now.onCore - schedule.onCore) / seconds, waiting: (now.waiting - schedule.waiting) / seconds } : null;
    return { cpuMs: cpuMsSince(cpu), loopBusy: performance.eventLoopUtilization(loop).utilization, scheduled };
  };
}

const percentile = (sorted: number[], fraction: number): number => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))]);

/** Runs `work(index)` for 0..count-1 with `concurrency` at once. */
async function closedLoop(count: number, concurrency: number, work: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const index = next;
      next += 1;
      await work(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
}

interface Bench {
  platform: Platform;
  baseUrl: string;
  connectorUrl: string;
  token: string;
  principal: Principal;
  /** The child process running the connector and the HTTP producers. */
  outside: Outside;
  /** Resolves when the event's OrchestrationEventProcessed is in the store; the time it was seen (wallClockMs). */
  processed(eventId: string): Promise<number>;
  close(): Promise<void>;
}

/** The forked outside world (bench/_events-outside.ts): its messages, one kind at a time. */
class Outside {
  private readonly queued: OutsideMessage[] = [];
  private readonly waiters: Array<() => void> = [];
  onEmitted: ((events: Array<{ id: string; at: number }>) => void) | null = null;

  constructor(readonly child: ChildProcess) {
    child.on('message', (message: OutsideMessage) => {
      if (message.kind === 'emitted') {
        this.onEmitted?.(message.events);
        return;
      }
      this.queued.push(message);
      for (const wake of this.waiters.splice(0)) wake();
    });
    child.once('exit', () => {
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  static start(secret: string): Outside {
    return new Outside(fork(path.join(__dirname, '_events-outside.js'), [secret], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
  }

  send(request: OutsideRequest): void {
    this.child.send(request);
  }

  async next<K extends Exclude<OutsideMessage['kind'], 'emitted'>>(kind: K): Promise<Extract<OutsideMessage, { kind: K }>> {
    for (;;) {
      const failed = this.queued.find((message) => message.kind === 'failed');
      if (failed?.kind === 'failed') throw new Error(`the outside process failed: ${failed.message}`);
      const at = this.queued.findIndex((message) => message.kind === kind);
      if (at >= 0) return this.queued.splice(at, 1)[0] as Extract<OutsideMessage, { kind: K }>;
      if (this.child.exitCode !== null) throw new Error(`the outside process exited with ${this.child.exitCode}`);
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.disconnect();
    await exited;
  }
}

/** Most emits in flight in a paced section: enough not to hold back the pace of a server that keeps up. */
const PACED_IN_FLIGHT = 256;

const BENCH_SETTINGS = ['SQLITE_CHECKPOINT', 'ORCHESTRATION_DISPATCH_CONCURRENCY', 'ORCHESTRATION_TENANT_CONCURRENCY'] as const;

function settingsFromEnvironment(): Record<string, string> {
  return Object.fromEntries(BENCH_SETTINGS.flatMap((name) => (process.env[name] === undefined ? [] : [[name, process.env[name]!]])));
}

async function setUp(): Promise<Bench> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-events-'));
  const platform = await createPlatform(
    // The store's and the dispatcher's settings from the environment, as a deployment sets them
    // (SQLITE_SYNCHRONOUS full by default, as deployed), to compare them on this workload.
    loadConfig({ ...settingsFromEnvironment(), DATA_DIR: dataDir, LOG_LEVEL: 'silent', SCRYPT_LOG_N: '12', OUTBOUND_ALLOW_INSECURE: 'true', OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true', SQLITE_SYNCHRONOUS: process.env.SQLITE_SYNCHRONOUS ?? 'full' }),
    { logger: silentLogger },
  );
  await platform.start();
  const outside = Outside.start(SECRET);
  const connector = await outside.next('listening');
  const server = await platform.httpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const { identity } = platform;
  const context = systemContext('bench');
  await seedPlanCatalogue(platform.commands);
  const owner = await register(identity, { email: 'owner@bench.test', password: PASSWORD, name: 'Owner', organization_name: 'Bench Shop', slug: 'bench-shop' }, context);
  // Verified without the emailed code: the bench measures events, not sign-up.
  await handleCommand(identity, userAggregate, userStream(owner.user_id), { type: 'IssueOtp', data: { purpose: 'email_verification', code_hash: 'bench', expires_at: '2999-01-01T00:00:00Z' } }, context);
  await handleCommand(identity, userAggregate, userStream(owner.user_id), { type: 'VerifyOtp', data: { purpose: 'email_verification', code_hash: 'bench' } }, context);
  // SDK connections are a premium feature: the subscription's own activation, as a paid checkout does.
  const activated = await activateSubscription(
    platform.commands,
    { tenant_id: owner.tenant_id, plan_id: 'premium', plan_code: 'premium', interval: 'month', payment_id: 'bench-pay', checkout_id: 'bench-checkout', paid_at: new Date().toISOString() },
    { ...systemContext('bench', 'payment_provider'), tenant_id: owner.tenant_id },
  );
  await platform.readYourWrites(activated.position);
  const session = await login(identity, 'owner@bench.test', PASSWORD, owner.tenant_id, context);

  const api = async (method: string, route: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> => {
    const response = await fetch(`${baseUrl}${route}`, { method, headers: { authorization: `Bearer ${session.token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };
  const created = await api('POST', '/api/v1/org/sdk-connections', { name: 'Bench shop connector', webhook_url: connector.url, signing_secret: SECRET, enabled: true });
  if (created.status !== 201) throw new Error(`the connection was not created: ${JSON.stringify(created.json)}`);
  const synced = await api('POST', `/api/v1/org/sdk-connections/${created.json.id as string}/sync-tools`, {});
  if (synced.status !== 200) throw new Error(`the connection was not synced: ${JSON.stringify(synced.json)}`);

  // Every OrchestrationEventProcessed, as the store records it (filtered by the store: the
  // bench's own watching should cost the process it measures as little as it can).
  const processed = new Arrivals();
  const subscription = platform.storedEvents.subscribeToAll({ fromPosition: await platform.eventStore.headPosition(), filter: { kind: 'event_type', types: ['OrchestrationEventProcessed'] } });
  const following = (async () => {
    for await (const message of subscription) {
      if (message.kind !== 'event' || message.event.type !== 'OrchestrationEventProcessed') continue;
      processed.arrived((message.event.data as { event_id: string }).event_id);
    }
  })();
  return {
    platform,
    baseUrl,
    connectorUrl: connector.url,
    token: session.token,
    outside,
    principal: { kind: 'user', user_id: owner.user_id, tenant_id: owner.tenant_id, role: 'owner', jti: 'bench' },
    processed: (eventId) => processed.when(eventId),
    async close() {
      await subscription.stop();
      await following;
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await outside.stop();
      await platform.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

type Emit = (orderId: string) => Promise<string>;

/** What emitted events go to: the platform, or the bare queue of the fair reference. */
interface Target {
  baseUrl: string;
  token: string;
  processed(eventId: string): Promise<number>;
}

/** N events from `concurrency` emitters in this process; each timed from its emit's answer to its processed event. */
async function measureEvents(bench: Target, name: string, emit: Emit, count: number, concurrency: number, prefix: string): Promise<Measurement> {
  const latencies: number[] = [];
  const settled: Array<Promise<number>> = [];
  const meter = sectionMeter();
  const started = wallClockMs();
  await closedLoop(count, concurrency, async (index) => {
    const id = await emit(`${prefix}-${index}`);
    const emittedAt = wallClockMs();
    settled.push(bench.processed(id).then((at) => (latencies.push(at - emittedAt), at)));
  });
  const last = Math.max(...(await Promise.all(settled)));
  return { name, events: count, seconds: (last - started) / 1000, latencies: latencies.sort((a, b) => a - b), ...meter() };
}

/**
 * N events emitted over HTTP by the producers of the outside process; each timed from its
 * emit's answer (there) to its processed event (here). With `rate`, paced: timed from the
 * moment each was due to be sent.
 */
async function measureHttpEvents(outside: Outside, target: Target, name: string, count: number, concurrency: number, prefix: string, rate?: number): Promise<Measurement> {
  const latencies: number[] = [];
  const settled: Array<Promise<number>> = [];
  outside.onEmitted = (events) => {
    for (const { id, at: emittedAt } of events) settled.push(target.processed(id).then((at) => (latencies.push(at - emittedAt), at)));
  };
  const meter = sectionMeter();
  outside.send({ kind: 'emit', base_url: target.baseUrl, token: target.token, count, concurrency, prefix, ...(rate === undefined ? {} : { rate }) });
  const { started_at, cpu_ms } = await outside.next('emits_done');
  const last = Math.max(...(await Promise.all(settled)));
  outside.onEmitted = null;
  return { name, events: count, seconds: (last - started_at) / 1000, latencies: latencies.sort((a, b) => a - b), ...meter(), outsideCpuMs: cpu_ms };
}

/** The ceiling: one signed tool.invoke of notify_warehouse per event, nothing stored. */
async function measureReference(bench: Bench, count: number, concurrency: number, prefix: string): Promise<Measurement> {
  const latencies: number[] = [];
  const meter = sectionMeter();
  const started = wallClockMs();
  await closedLoop(count, concurrency, async (index) => {
    const callStarted = wallClockMs();
    const answer = await callConnector({
      url: bench.connectorUrl,
      secret: SECRET,
      body: { protocol_version: PROTOCOL_VERSION, request_id: `${prefix}-${index}`, type: 'tool.invoke', tool: 'notify_warehouse', parameters: { order_id: `${prefix}-${index}` } },
    });
    if (answer.status !== 200 || (answer.json as { type?: string } | undefined)?.type !== 'result') throw new Error(`the reference got ${answer.status} ${answer.text}`);
    latencies.push(wallClockMs() - callStarted);
  });
  const seconds = (wallClockMs() - started) / 1000;
  return { name: "reference: bare loop, the SDK's callConnector per event (signed tool.invoke)", events: count, seconds, latencies: latencies.sort((a, b) => a - b), ...meter() };
}

function printMeasurements(measurements: Measurement[]): void {
  console.log('');
  console.log('| path | events | seconds | events/s | p50 ms | p99 ms | max ms | CPU ms per event: this process | the outside process (until its last emit) | main thread busy | of which on a core / waiting for one |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const m of measurements) {
    const outsideCpu = m.outsideCpuMs === undefined ? '-' : (m.outsideCpuMs / m.events).toFixed(2);
    const scheduled = m.scheduled === null ? '-' : `${Math.round(m.scheduled.onCore * 100)} % / ${Math.round(m.scheduled.waiting * 100)} %`;
    console.log(
      `| ${m.name} | ${m.events} | ${m.seconds.toFixed(2)} | ${Math.round(m.events / m.seconds)} | ${percentile(m.latencies, 0.5).toFixed(1)} | ${percentile(m.latencies, 0.99).toFixed(1)} | ${m.latencies[m.latencies.length - 1].toFixed(1)} | ${(m.cpuMs / m.events).toFixed(2)} | ${outsideCpu} | ${Math.round(m.loopBusy * 100)} % | ${scheduled} |`,
    );
  }
  console.log('');
}

export async function run(args: string[]): Promise<void> {
  const options = parseOptions(args);
  const bench = await setUp();
  const bareDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-events-bare-'));
  const bare = await startBareQueue({ file: path.join(bareDir, 'queue.db'), connectorUrl: bench.connectorUrl, secret: SECRET, concurrency: bench.platform.config.orchestrationDispatch.concurrency });
  try {
    const viaUseCase: Emit = async (orderId) =>
      (await emitOrchestrationEvent(bench.platform.orchestration, bench.principal, { name: 'shop.order.created', source: 'bench', payload: { order_id: orderId } }, systemContext('bench'))).event.value.id;

    console.log(
      `events bench: ${options.events} shop.order.created per section, ${options.concurrency} concurrent emitters, the prepare_order flow calling the example connector in a child process (which also runs the HTTP producers); embedded store (SQLite, SQLITE_SYNCHRONOUS=${bench.platform.config.sqliteSynchronous}), dispatch concurrency ${bench.platform.config.orchestrationDispatch.concurrency}, Node ${process.version}`,
    );
    // Each section is measured right after a warm-up of its own (JIT, caches, the connector's
    // keep-alive sockets): as many events as it measures, since after 300 the platform's code
    // was not yet at its steady speed (a section then measured 700-750 events/s over HTTP at
    // 1.9-2.0 ms of CPU per order; after 1,000, 810 at 1.68; after 2,000 to 5,000, 835-850 at
    // 1.62-1.69), and a server in use is warm. Warming everything first and measuring after
    // left each section behind the other systems' runs in the same process (the platform's
    // came out 5-10 % lower than alone; docs/performance.md, thirteenth session).
    const warmedAndMeasured = async (measure: (count: number, label: string) => Promise<Measurement>, label: string): Promise<Measurement> => {
      await measure(options.warmup, `warm-${label}`);
      return measure(options.events, label);
    };
    const measurePlatform = async (): Promise<[Measurement, Measurement]> => [
      await warmedAndMeasured((count, label) => measureHttpEvents(bench.outside, bench, 'platform, emitted over HTTP (POST /api/v1/org/events)', count, options.concurrency, label), 'http'),
      await warmedAndMeasured((count, label) => measureEvents(bench, 'platform, emitted through the use case (emitOrchestrationEvent, no HTTP)', viaUseCase, count, options.concurrency, label), 'app'),
    ];
    if (options.platformOnly) {
      printMeasurements(await measurePlatform());
      return;
    }
    const ceiling = await warmedAndMeasured((count, label) => measureReference(bench, count, options.concurrency, label), 'ref');
    const bareHttp = await warmedAndMeasured((count, label) => measureHttpEvents(bench.outside, bare, 'fair reference: bare durable queue (SQLite), emitted over HTTP', count, options.concurrency, label), 'bare-http');
    const bareInProcess = await warmedAndMeasured((count, label) => measureEvents(bare, 'fair reference: bare durable queue (SQLite), emitted in process', bare.emit, count, options.concurrency, label), 'bare');
    const [http, useCase] = await measurePlatform();

    // Latency at a load: ten seconds of emits at the rate (at most --events of them).
    const pacedCount = Math.max(1, Math.min(options.events, Math.round(options.rate * 10)));
    const pacedName = (what: string): string => `${what}, emitted over HTTP at ${options.rate} events/s (paced), due -> processed`;
    const bareAtRate = await measureHttpEvents(bench.outside, bare, pacedName('fair reference: bare durable queue'), pacedCount, PACED_IN_FLIGHT, 'bare-paced', options.rate);
    const platformAtRate = await measureHttpEvents(bench.outside, bench, pacedName('platform'), pacedCount, PACED_IN_FLIGHT, 'paced', options.rate);

    printMeasurements([ceiling, bareHttp, bareInProcess, http, useCase, bareAtRate, platformAtRate]);
    const rate = (m: Measurement): number => m.events / m.seconds;
    console.log(`fair ratio, platform / bare durable queue: over HTTP ${(rate(http) / rate(bareHttp)).toFixed(3)}, in process ${(rate(useCase) / rate(bareInProcess)).toFixed(3)}`);
    console.log(`against the ceiling (callConnector alone): over HTTP ${(rate(http) / rate(ceiling)).toFixed(3)}, in process ${(rate(useCase) / rate(ceiling)).toFixed(3)}`);
    console.log(`target (issue #14): >= 1000 events/s end to end; over HTTP ${Math.round(rate(http))} events/s`);
  } finally {
    await bare.close();
    fs.rmSync(bareDir, { recursive: true, force: true });
    await bench.close();
  }
}
