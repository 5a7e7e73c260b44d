// `npm run bench -- api-inprocess [--requests 20000] [--rounds 6] [--profile [--bare]]`
//
// The two servers of `npm run bench -- api` driven through their Koa callbacks in this
// process, without sockets: the CPU each spends on an authenticated `GET /api/v1/org/members`,
// in µs per request, alternated in rounds. No load generator and no kernel share the
// measurement, so it holds on a busy machine where throughput does not; it leaves out what
// both servers pay alike for the socket and node:http's parsing and writing. `--profile`
// drives the platform only (the bare route with `--bare`), for `node --cpu-prof dist/bench/main.js api-inprocess --profile`.

import http from 'node:http';
import net from 'node:net';
import type Koa from 'koa';
import { option } from './_load';
import { setUpApiBench } from './api';

type Callback = ReturnType<Koa['callback']>;

const socket = new net.Socket();

/** One GET through `callback`, resolved with the status and body it ends with. */
function request(callback: Callback, url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  // One request per connection costs both servers alike; one socket for all of them is
  // closer to the keep-alive connections of the load bench.
  const req = new http.IncomingMessage(socket);
  req.method = 'GET';
  req.url = url;
  req.headers = headers;
  req.push(null);
  const res = new http.ServerResponse(req);
  return new Promise((resolve) => {
    // Stands in for writing to the socket, which both servers would pay alike.
    res.end = ((chunk?: unknown) => {
      resolve({ status: res.statusCode, body: typeof chunk === 'string' ? chunk : String(chunk) });
      // Lets Koa's on-finished listeners on the shared socket go.
      res.emit('finish');
      return res;
    }) as typeof res.end;
    void callback(req, res);
  });
}

async function cpuPerRequest(callback: Callback, headers: Record<string, string>, requests: number): Promise<number> {
  const before = process.cpuUsage();
  for (let i = 0; i < requests; i += 1) {
    const { status } = await request(callback, '/api/v1/org/members', headers);
    if (status !== 200) throw new Error(`answered ${status}`);
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / requests;
}

export async function run(args: string[]): Promise<void> {
  const requests = Math.round(option(args, 'requests', 20_000));
  const rounds = Math.round(option(args, 'rounds', 6));
  const servers = await setUpApiBench();
  try {
    const headers = { authorization: `Bearer ${servers.token}`, host: 'localhost' };
    const platform = servers.platformApp.callback();
    const bare = servers.bareApp.callback();
    const [platformBody, bareBody] = [await request(platform, '/api/v1/org/members', headers), await request(bare, '/api/v1/org/members', headers)];
    if (platformBody.body !== bareBody.body) throw new Error(`the bare route answers ${bareBody.body}, the platform ${platformBody.body}`);
    if (args.includes('--profile')) {
      await cpuPerRequest(args.includes('--bare') ? bare : platform, headers, requests * rounds);
      return;
    }
    // Warm-up: both paths optimized before anything counts.
    await cpuPerRequest(bare, headers, requests);
    await cpuPerRequest(platform, headers, requests);
    const bareRuns: number[] = [];
    const platformRuns: number[] = [];
    for (let round = 0; round < rounds; round += 1) {
      bareRuns.push(await cpuPerRequest(bare, headers, requests));
      platformRuns.push(await cpuPerRequest(platform, headers, requests));
    }
    const best = (runs: number[]): number => Math.min(...runs);
    const show = (runs: number[]): string => runs.map((value) => value.toFixed(1)).join(', ');
    console.log(`api in-process: ${rounds} alternated rounds of ${requests} requests each, CPU µs per request (user + system), Node ${process.version}`);
    console.log(`bare Koa route, same work: ${show(bareRuns)} (best ${best(bareRuns).toFixed(1)})`);
    console.log(`platform:                  ${show(platformRuns)} (best ${best(platformRuns).toFixed(1)})`);
    console.log(`CPU ratio bare / platform (best of each): ${(best(bareRuns) / best(platformRuns)).toFixed(2)}`);
  } finally {
    await servers.close();
  }
}
