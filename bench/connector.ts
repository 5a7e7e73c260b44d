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
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import { createConnector, PROTOCOL_VERSION, SDK_VERSION, signedHeaders } from '../adapters/connector-sdk';
import { RESPONSE_HEADERS } from '../adapters/connector-sdk/responses';
import { type LoadTarget, answerCpuTimeRequests, cpuPerRequest, forkServers, measureInRotation, printTable, rotationOptions, requestsPerSecond } from './_load';

const REQUIRED_RATIO = 0.8;
const SECRET_ENV = 'BENCH_CONNECTOR_SECRET';
const MAX_SKEW_SECONDS = 300;

interface ServerPorts {
  sdk: number;
  reference: number;
  bare: number;
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
  } finally {
    servers.stop();
  }
}
