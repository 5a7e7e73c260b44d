// `npm run bench -- connector [--duration 10] [--slices 5] [--connections 50] [--warmup 2]`
//
// Signed pings per second through the connector SDK's `listen()` beside a reference: a bare
// node:http server doing the same verification of the signed request that the protocol
// requires of any connector (spec 5.2: the timestamp inside the replay window, HMAC-SHA256
// of `v1:<timestamp>:<raw body>` with `createHmac`, compared with `timingSafeEqual`) and
// answering the same JSON with the same headers. The protocol's own cost is therefore in
// both; the ratio measures what the SDK adds. The SDK must keep at least 0.8 of the
// reference's throughput; the exit code is 1 when it does not. A third server, bare
// node:http without the check, shows what the protocol itself costs; no target applies.
//
// Every server is Node's own, answering each request as soon as it is ready. They run in a
// child process so the load generator (autocannon) does not share their event loop. One
// ping body is signed up front with a timestamp that stays inside the 300 s replay window
// for the whole run.
//
// Each server gets `duration` seconds of load, cut into `slices` slices taken in rotation
// (reference, SDK, bare, reference, ...): on a small shared machine the available CPU
// drifts by tens of percent within seconds, and rotating spreads that drift over all
// servers instead of handing it to whichever ran last. req/s is total requests over total
// seconds; p99 is the median of the slices' p99.
//
// The platform side (`--only client` runs it alone, `--only server` skips it): signed tool
// invocations per second through the platform's connector client (adapters/connector-client:
// sign, the outbound guard's address check, POST, the answer decoded with io-ts and checked
// against the request) against the example connector (its `search_products` tool, in the
// same child process), beside the bare reference: the SDK's `callConnector` doing the same
// signed POST and `JSON.parse` of the answer, nothing more. `connections` callers each send
// one invocation after another (a closed loop), in rotating slices as above; calls/s, p99 of
// every call's latency, and the CPU the calling process spent per call (the client's own
// cost: the connector runs in the child). Every call must answer `result`. No target: the
// ratio says what the platform's checks cost a caller.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { callConnector, createConnector, PROTOCOL_VERSION, SDK_VERSION, signedHeaders } from '../adapters/connector-sdk';
import { RESPONSE_HEADERS } from '../adapters/connector-sdk/responses';
import { createExampleConnector } from '../adapters/connector-sdk/example/connector';
import { SignedConnectorClient } from '../adapters/connector-client/connector-client';
import type { ConnectorRequest } from '../application/ports/connector-client';
import { GuardedOutboundHttp } from '../infrastructure/outbound/signed-http';
import { systemClock } from '../infrastructure/system';
import { type LoadTarget, type RotationOptions, answerCpuTimeRequests, cpuPerRequest, forkServers, measureInRotation, printTable, rotationOptions, requestsPerSecond } from './_load';

const REQUIRED_RATIO = 0.8;
const SECRET_ENV = 'BENCH_CONNECTOR_SECRET';
const MAX_SKEW_SECONDS = 300;

interface ServerPorts {
  sdk: number;
  reference: number;
  bare: number;
  /** The SDK's example connector (its tools), for the platform side. */
  example: number;
}

function readBody(request: http.IncomingMessage, then: (body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => then(Buffer.concat(chunks)));
}

/** The check spec 5.2 asks of every connector: timestamp in the window, then the HMAC in constant time. */
function signedRequestIsValid(secret: string, headers: http.IncomingHttpHeaders, body: Buffer): boolean {
  const timestamp = headers['x-svc-timestamp'];
  const signature = headers['x-svc-signature'];
  if (typeof timestamp !== 'string' || typeof signature !== 'string' || !/^[0-9]{1,15}$/.test(timestamp)) return false;
  if (Math.abs(Math.floor(Date.now() / 1000) - Number(timestamp)) > MAX_SKEW_SECONDS) return false;
  if (!/^v1=[0-9a-f]{64}$/.test(signature)) return false;
  const expected = createHmac('sha256', secret).update(`v1:${timestamp}:`).update(body).digest();
  return timingSafeEqual(Buffer.from(signature.slice(3), 'hex'), expected);
}

/** Child process: the three servers, on ephemeral ports of 127.0.0.1, until the parent disconnects. */
async function serve(): Promise<void> {
  const secret = process.env[SECRET_ENV] as string;
  const sdk = await createConnector({ signingSecret: secret }).listen(0, '127.0.0.1');
  const example = await createExampleConnector({ signingSecret: secret, otpDelivery: { send: () => undefined } }).listen(0, '127.0.0.1');
  const pong = JSON.stringify({ type: 'pong', protocol_version: PROTOCOL_VERSION, sdk_version: SDK_VERSION });
  const headers = { ...RESPONSE_HEADERS, 'content-length': Buffer.byteLength(pong) };
  const reference = http.createServer((request, response) => {
    readBody(request, (body) => {
      response.writeHead(signedRequestIsValid(secret, request.headers, body) ? 200 : 401, headers);
      response.end(pong);
    });
  });
  const bare = http.createServer((request, response) => {
    readBody(request, () => {
      response.writeHead(200, headers);
      response.end(pong);
    });
  });
  await new Promise<void>((resolve) => reference.listen(0, '127.0.0.1', resolve));
  await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
  const ports: ServerPorts = {
    sdk: sdk.port,
    reference: (reference.address() as { port: number }).port,
    bare: (bare.address() as { port: number }).port,
    example: example.port,
  };
  answerCpuTimeRequests();
  process.send?.(ports);
  process.once('disconnect', () => process.exit(0));
}

/** One way of making a signed tool invocation; resolves once its answer is checked. */
interface Caller {
  name: string;
  invoke(requestId: string): Promise<void>;
}

interface CallerMeasurement {
  name: string;
  calls: number;
  seconds: number;
  /** Every call's latency, ms. */
  latencies: number[];
  /** This process's CPU during the caller's slices, µs. */
  cpu: { user: number; system: number };
}

let invocationCounter = 0;

/** `connections` callers in a closed loop for `seconds`; returns each call's latency. */
async function closedLoop(caller: Caller, connections: number, seconds: number): Promise<number[]> {
  const latencies: number[] = [];
  const until = performance.now() + seconds * 1000;
  const loop = async (): Promise<void> => {
    while (performance.now() < until) {
      invocationCounter += 1;
      const started = performance.now();
      await caller.invoke(`bench-invoke-${invocationCounter}`);
      latencies.push(performance.now() - started);
    }
  };
  await Promise.all(Array.from({ length: connections }, loop));
  return latencies;
}

function percentile(sorted: number[], fraction: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))];
}

/** Warms each caller up, then runs them in rotating slices, as the servers above are loaded. */
async function measureCallers(callers: Caller[], options: RotationOptions): Promise<CallerMeasurement[]> {
  for (const caller of callers) await closedLoop(caller, options.connections, options.warmup);
  const measurements = callers.map((caller): CallerMeasurement => ({ name: caller.name, calls: 0, seconds: 0, latencies: [], cpu: { user: 0, system: 0 } }));
  const sliceSeconds = options.duration / options.slices;
  for (let slice = 0; slice < options.slices; slice += 1) {
    for (const [index, caller] of callers.entries()) {
      const before = process.cpuUsage();
      const started = performance.now();
      const latencies = await closedLoop(caller, options.connections, sliceSeconds);
      const seconds = (performance.now() - started) / 1000;
      const used = process.cpuUsage(before);
      const measurement = measurements[index];
      measurement.calls += latencies.length;
      measurement.seconds += seconds;
      for (const latency of latencies) measurement.latencies.push(latency);
      measurement.cpu.user += used.user;
      measurement.cpu.system += used.system;
    }
  }
  return measurements;
}

/** Signed tool invocations through the platform's connector client and through the SDK's bare `callConnector`. */
async function measurePlatformSide(secret: string, port: number, options: RotationOptions): Promise<void> {
  const endpoint = `http://127.0.0.1:${port}`;
  const parameters = { query: 'beans', max_results: 3 };
  // The bench's connector is on 127.0.0.1 over http, as OUTBOUND_ALLOW_* allow in development;
  // the guard still checks the address of every call.
  const client = new SignedConnectorClient(new GuardedOutboundHttp({ allowInsecureUrls: true, allowPrivateNetworks: true }), {
    timeoutMs: 30_000,
    maxResponseBytes: 1024 * 1024,
    clock: systemClock,
  });
  const platform: Caller = {
    name: 'platform connector client (guard, sign, io-ts check)',
    async invoke(requestId) {
      const request: ConnectorRequest = { type: 'tool.invoke', request_id: requestId, tool: 'search_products', parameters };
      const exchange = await client.call({ endpoint, signingSecret: secret }, request);
      if (exchange.answer.type !== 'result') throw new Error(`the platform client got ${JSON.stringify(exchange.answer)}`);
    },
  };
  const reference: Caller = {
    name: "reference: the SDK's callConnector (sign, POST, JSON.parse)",
    async invoke(requestId) {
      const answer = await callConnector({
        url: `${endpoint}/svc`,
        secret,
        body: { protocol_version: PROTOCOL_VERSION, request_id: requestId, type: 'tool.invoke', tool: 'search_products', parameters },
      });
      if (answer.status !== 200 || (answer.json as { type?: string } | undefined)?.type !== 'result') throw new Error(`the reference got ${answer.status} ${answer.text}`);
    },
  };
  console.log(
    `platform side: signed tool.invoke of search_products on the example connector, ${options.connections} concurrent callers, ${options.warmup} s warm-up each, then ${options.duration} s per caller in ${options.slices} rotating slices`,
  );
  const [ofReference, ofPlatform] = await measureCallers([reference, platform], options);
  console.log('');
  console.log('| caller | invocations/s | p50 ms | p99 ms | caller CPU µs/call (user + system) |');
  console.log('|---|---:|---:|---:|---:|');
  for (const measurement of [ofReference, ofPlatform]) {
    const sorted = [...measurement.latencies].sort((a, b) => a - b);
    const user = measurement.cpu.user / measurement.calls;
    const system = measurement.cpu.system / measurement.calls;
    console.log(
      `| ${measurement.name} | ${Math.round(measurement.calls / measurement.seconds)} | ${percentile(sorted, 0.5).toFixed(2)} | ${percentile(sorted, 0.99).toFixed(2)} | ${user.toFixed(1)} + ${system.toFixed(1)} = ${(user + system).toFixed(1)} |`,
    );
  }
  console.log('');
  const rate = (measurement: CallerMeasurement): number => measurement.calls / measurement.seconds;
  console.log(`ratio platform client / reference: ${(rate(ofPlatform) / rate(ofReference)).toFixed(2)} (no target: what the guard and the checks cost a caller)`);
  const cpu = (measurement: CallerMeasurement): number => (measurement.cpu.user + measurement.cpu.system) / measurement.calls;
  console.log(`caller CPU per call beyond the reference: ${(cpu(ofPlatform) - cpu(ofReference)).toFixed(1)} µs`);
}

/** Which parts `--only` selects: the SDK's server side, the platform's client side, or both. */
function partsOf(args: string[]): { server: boolean; client: boolean } {
  const index = args.indexOf('--only');
  const only = index === -1 ? undefined : args[index + 1];
  return { server: only !== 'client', client: only !== 'server' };
}

/** Runs the connector bench and prints req/s, p99 latency and the SDK-to-bare ratio, then the platform side. */
export async function run(args: string[]): Promise<void> {
  if (args.includes('--serve')) return serve();
  const rotation = rotationOptions(args);
  const { duration, slices, connections, warmup } = rotation;
  const parts = partsOf(args);
  const secret = randomBytes(32).toString('hex');
  const body = JSON.stringify({ protocol_version: PROTOCOL_VERSION, request_id: 'bench-ping', type: 'ping' });
  // Signed once: every request of the run reuses this body and these headers.
  const headers = signedHeaders(secret, body);
  const servers = await forkServers<ServerPorts>('connector', { [SECRET_ENV]: secret });
  try {
    if (parts.client && !parts.server) {
      await measurePlatformSide(secret, servers.message.example, rotation);
      return;
    }
    console.log(
      `connector bench: ${connections} connections, ${warmup} s warm-up each, then ${duration} s per server in ${slices} rotating slices, Node ${process.version}`,
    );
    const ping = (name: string, port: number): LoadTarget => ({ name, url: `http://127.0.0.1:${port}/svc`, method: 'POST', headers, body });
    const [reference, sdk, bare] = await measureInRotation(
      [
        ping('reference: bare node:http + the same HMAC check', servers.message.reference),
        ping('connector SDK listen()', servers.message.sdk),
        ping("bare node:http, no check (the protocol's own cost)", servers.message.bare),
      ],
      rotation,
      servers.cpuTime,
    );
    printTable([reference, sdk, bare]);
    const ratio = requestsPerSecond(sdk) / requestsPerSecond(reference);
    console.log(`ratio SDK / reference: ${ratio.toFixed(2)} (required >= ${REQUIRED_RATIO})`);
    console.log(`ratio reference / bare without the check: ${(requestsPerSecond(reference) / requestsPerSecond(bare)).toFixed(2)} (no target: the protocol's cost)`);
    const userCpu = (measurement: typeof bare) => cpuPerRequest(measurement).user;
    console.log(
      `server user CPU per request beyond the reference: SDK ${(userCpu(sdk) - userCpu(reference)).toFixed(1)} µs; the check itself over bare: ${(userCpu(reference) - userCpu(bare)).toFixed(1)} µs`,
    );
    if (ratio < REQUIRED_RATIO) process.exitCode = 1;
    if (parts.client) await measurePlatformSide(secret, servers.message.example, rotation);
  } finally {
    servers.stop();
  }
}
