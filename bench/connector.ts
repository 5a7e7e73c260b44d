// `npm run bench -- connector [--duration 10] [--slices 5] [--connections 50] [--warmup 2]`
//
// Signed pings per second through the connector SDK's `listen()` beside a bare node:http
// server answering the same JSON with the same headers, in the same run and with the same
// load generator (autocannon). The servers run in a child process so the load generator
// does not share their event loop. One ping body is signed up front with a timestamp that
// stays inside the 300 s replay window for the whole run.
//
// Each server gets `duration` seconds of load, cut into `slices` slices taken in rotation
// (bare, SDK, reference, bare, SDK, ...): on a small shared machine the available CPU drifts
// by tens of percent within seconds, and rotating spreads that drift over all servers
// instead of handing it to whichever ran last. req/s is total requests over total seconds; p99 is the
// median of the slices' p99. The SDK must keep at least 0.7 of the bare server's
// throughput; the exit code is 1 when it does not.
//
// A third, reference server is a bare handler plus the one check no correct connector can
// skip: an HMAC-SHA256 of the signed string with `createHmac`, compared with
// `timingSafeEqual`. It shows how much of the gap is the protocol's own cryptography.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import { createConnector, PROTOCOL_VERSION, SDK_VERSION, signedHeaders } from '../adapters/connector-sdk';
import { RESPONSE_HEADERS } from '../adapters/connector-sdk/responses';
import { type LoadTarget, answerCpuTimeRequests, cpuPerRequest, forkServers, measureInRotation, printTable, rotationOptions, requestsPerSecond } from './_load';

const REQUIRED_RATIO = 0.7;
const SECRET_ENV = 'BENCH_CONNECTOR_SECRET';

interface ServerPorts {
  sdk: number;
  bare: number;
  bareHmac: number;
}

/** Child process: both servers, on ephemeral ports of 127.0.0.1, until the parent disconnects. */
async function serve(): Promise<void> {
  const secret = process.env[SECRET_ENV] as string;
  const sdk = await createConnector({ signingSecret: secret }).listen(0, '127.0.0.1');
  const pong = JSON.stringify({ type: 'pong', protocol_version: PROTOCOL_VERSION, sdk_version: SDK_VERSION });
  const bare = http.createServer((request, response) => {
    // Same work a minimal handler must do: read the body, answer the same JSON and headers.
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      response.writeHead(200, { ...RESPONSE_HEADERS, 'content-length': Buffer.byteLength(pong) });
      response.end(pong);
    });
  });
  const bareHmac = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const expected = createHmac('sha256', secret).update(`v1:${request.headers['x-svc-timestamp']}:`).update(Buffer.concat(chunks)).digest();
      const presented = Buffer.from(String(request.headers['x-svc-signature']).slice(3), 'hex');
      const valid = presented.length === expected.length && timingSafeEqual(presented, expected);
      response.writeHead(valid ? 200 : 401, { ...RESPONSE_HEADERS, 'content-length': Buffer.byteLength(pong) });
      response.end(pong);
    });
  });
  await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
  await new Promise<void>((resolve) => bareHmac.listen(0, '127.0.0.1', resolve));
  const ports: ServerPorts = {
    sdk: sdk.port,
    bare: (bare.address() as { port: number }).port,
    bareHmac: (bareHmac.address() as { port: number }).port,
  };
  answerCpuTimeRequests();
  process.send?.(ports);
  process.once('disconnect', () => process.exit(0));
}

/** Runs the connector bench and prints req/s, p99 latency and the SDK-to-bare ratio. */
export async function run(args: string[]): Promise<void> {
  if (args.includes('--serve')) return serve();
  const rotation = rotationOptions(args);
  const { duration, slices, connections, warmup } = rotation;
  const secret = randomBytes(32).toString('hex');
  const body = JSON.stringify({ protocol_version: PROTOCOL_VERSION, request_id: 'bench-ping', type: 'ping' });
  // Signed once: every request of the run reuses this body and these headers.
  const headers = signedHeaders(secret, body);
  const servers = await forkServers<ServerPorts>('connector', { [SECRET_ENV]: secret });
  try {
    const bareUrl = `http://127.0.0.1:${servers.message.bare}/svc`;
    const bareHmacUrl = `http://127.0.0.1:${servers.message.bareHmac}/svc`;
    const sdkUrl = `http://127.0.0.1:${servers.message.sdk}/svc`;
    console.log(
      `connector bench: ${connections} connections, ${warmup} s warm-up each, then ${duration} s per server in ${slices} rotating slices, Node ${process.version}`,
    );
    const ping = (name: string, url: string): LoadTarget => ({ name, url, method: 'POST', headers, body });
    const [bare, sdk, bareHmac] = await measureInRotation(
      [ping('bare node:http', bareUrl), ping('connector SDK listen()', sdkUrl), ping('bare node:http + HMAC check (ref.)', bareHmacUrl)],
      rotation,
      servers.cpuTime,
    );
    const ratio = requestsPerSecond(sdk) / requestsPerSecond(bare);
    printTable([bare, bareHmac, sdk]);
    console.log(`ratio SDK / bare: ${ratio.toFixed(2)} (required >= ${REQUIRED_RATIO})`);
    console.log(`ratio SDK / bare + HMAC check: ${(requestsPerSecond(sdk) / requestsPerSecond(bareHmac)).toFixed(2)}`);
    const userCpu = (measurement: typeof bare) => cpuPerRequest(measurement).user;
    console.log(
      `server user CPU added per request: SDK ${(userCpu(sdk) - userCpu(bare)).toFixed(1)} µs, HMAC check alone ${(userCpu(bareHmac) - userCpu(bare)).toFixed(1)} µs`,
    );
    if (ratio < REQUIRED_RATIO) process.exitCode = 1;
  } finally {
    servers.stop();
  }
}
