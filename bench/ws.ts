// `npm run bench -- ws [--visitors 1000] [--messages 5] [--documents 5] [--warmup 100] [--rounds 1] [--profile]`:
// the widget's realtime chat (issue #15): `visitors` WebSocket visitors at once on /ws/chat, each
// sending `messages` messages one after another (the next once the previous turn's `done`
// came), on the embedded default: SQLite store and index, the extractive engine, a few
// documents indexed. SQLITE_SYNCHRONOUS from the environment (default full, as deployed).
//
// Each server runs alone in a child process (bench/_ws-server.ts, loading only its own modules),
// so its RSS and CPU are its own; the visitors run in this process. The machine has 2 cores: the visitors' client
// work shares them with the server, as the other benches' load generators do.
// - Connect: every visitor opens its socket and sends `resume` (100 at a time), until `ready`.
// - Load: then all of them send their messages; messages/s = visitors x messages over the wall
//   time from the first message sent to the last `done`; first-delta latency is from a
//   message's sending to its first `delta` frame, as the visitor sees it; the server's CPU per
//   message; the server's RSS idle (set up, no socket), with every socket open, and its peak
//   during the load (sampled every 50 ms).
//
// The reference (`bare reference`, as docs/performance.md's other benches) is a bare `ws`
// server doing the work every such turn requires and nothing more: the token checked (keyed
// digest) on connect and on every message, the visitor's message recorded durably before the
// answer and the answer after it (appends to the same embedded SQLite event store, in one
// stream per conversation), the passages retrieved from the same SQLite FTS5 index holding
// the same documents, the answer made by the same extractive engine and streamed as the same
// frames (the stored message, deltas, citations, the stored answer, done). It has no read
// models, projections, sagas, read-your-writes wait, quota, rate limit, heartbeat, metrics or
// backpressure: it is the ceiling, not a like-for-like. Nothing is asserted; the numbers go to
// docs/performance.md.
//
// Open files: each visitor is a descriptor here and one in the server. When the soft limit
// (`ulimit -n`) is too low for that and the hard limit allows it, the bench runs itself again
// under `ulimit -n <needed>` and says so.

import { randomBytes } from 'node:crypto';
import { execFileSync, fork, spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { QUESTIONS } from './_ws-knowledge';
import type { Listening, Usage } from './_ws-server';

interface Options {
  visitors: number;
  messages: number;
  documents: number;
  warmup: number;
  rounds: number;
  profile: boolean;
}

function parseOptions(args: string[]): Options {
  const read = (name: string, fallback: number): number => {
    const at = args.indexOf(`--${name}`);
    return at >= 0 ? Number(args[at + 1]) : fallback;
  };
  return { visitors: read('visitors', 1000), messages: read('messages', 5), documents: read('documents', 5), warmup: read('warmup', 100), rounds: read('rounds', 1), profile: args.includes('--profile') };
}

const SYNCHRONOUS = process.env.SQLITE_SYNCHRONOUS ?? 'full';
const PROFILE_DIR = path.join(os.tmpdir(), 'svc-bench-ws-profile');

const percentile = (sorted: readonly number[], p: number): number => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]);

// ------------------------------------------------------------------------------- visitor side

/** One visitor's socket: resolves the frames a turn waits for. */
class Visitor {
  private onFrame: ((frame: { type: string }) => void) | null = null;
  closed: { code: number; reason: string } | null = null;

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data) => this.onFrame?.(JSON.parse(data.toString()) as { type: string }));
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      this.onFrame?.({ type: 'closed' });
    });
    ws.on('error', () => undefined);
  }

  static async connect(url: string, token: string): Promise<Visitor> {
    const ws = new WebSocket(`${url}/ws/chat?token=${encodeURIComponent(token)}`, { perMessageDeflate: false });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const visitor = new Visitor(ws);
    await visitor.exchange({ type: 'resume', visitor_id: randomBytes(16).toString('base64url') }, (frame) => frame.type === 'ready');
    return visitor;
  }

  /** Sends `frame`; resolves when `last` matches a frame, calling `each` on every frame until then. */
  exchange(frame: unknown, last: (frame: { type: string }) => boolean, each?: (frame: { type: string }) => void): Promise<void> {
    return new Promise((resolve, reject) => {
      this.onFrame = (received) => {
        if (received.type === 'closed') return reject(new Error(`closed ${this.closed?.code} ${this.closed?.reason}`));
        each?.(received);
        if (last(received)) {
          this.onFrame = null;
          resolve();
        }
      };
      this.ws.send(JSON.stringify(frame));
    });
  }

  /** One turn: ms to its first delta (null when none came), and whether it cited a passage and failed. */
  async ask(text: string): Promise<{ firstDeltaMs: number | null; cited: boolean; error: string | null }> {
    const sent = performance.now();
    let firstDeltaMs: number | null = null;
    let cited = false;
    let error: string | null = null;
    await this.exchange(
      { type: 'message', text },
      (frame) => frame.type === 'done' || (frame.type === 'error' && error !== 'assistant_unavailable'),
      (frame) => {
        if (frame.type === 'delta' && firstDeltaMs === null) firstDeltaMs = performance.now() - sent;
        if (frame.type === 'citation') cited = true;
        if (frame.type === 'error') error = (frame as { type: string; code?: string }).code ?? 'error';
      },
    );
    return { firstDeltaMs, cited, error };
  }

  close(): void {
    this.ws.terminate();
  }
}

interface RunResult {
  server: string;
  connectSeconds: number;
  messages: number;
  seconds: number;
  /** First-delta latencies, ms, sorted. */
  latencies: number[];
  cited: number;
  errors: Map<string, number>;
  rssIdleMb: number;
  rssConnectedMb: number;
  rssPeakMb: number;
  cpuUsPerMessage: number;
}

type ChildMessage = Listening | Usage | { kind: 'sampling' };

async function runServer(kind: 'platform' | 'reference', options: Options): Promise<RunResult> {
  // --profile: the platform's process writes a CPU profile (node --cpu-prof) where the bench says.
  const execArgv = options.profile && kind === 'platform' ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : [];
  const child = fork(path.join(__dirname, '_ws-server.js'), [kind, String(options.documents)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv });
  const replies: ChildMessage[] = [];
  const waiters: Array<() => void> = [];
  child.on('message', (message) => {
    replies.push(message as ChildMessage);
    for (const wake of waiters.splice(0)) wake();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const reply = async <K extends ChildMessage['kind']>(kind: K): Promise<Extract<ChildMessage, { kind: K }>> => {
    for (;;) {
      const at = replies.findIndex((message) => message.kind === kind);
      if (at >= 0) return replies.splice(at, 1)[0] as Extract<ChildMessage, { kind: K }>;
      if (child.exitCode !== null) throw new Error(`the ${kind} server exited with ${child.exitCode}`);
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  const rssNow = async (): Promise<number> => {
    child.send('sample:start');
    await reply('sampling');
    child.send('sample:stop');
    return (await reply('usage')).rss_now;
  };
  try {
    const { url, token } = await reply('listening');
    // Warm-up: a few visitors' turns, unmeasured, so the measure is not of a cold JIT.
    const warm = await Promise.all(Array.from({ length: Math.min(20, options.visitors) }, () => Visitor.connect(url, token)));
    await Promise.all(warm.map(async (visitor, n) => {
      for (let m = n; m < options.warmup; m += warm.length) await visitor.ask(QUESTIONS[m % QUESTIONS.length]);
    }));
    for (const visitor of warm) visitor.close();
    const rssIdle = await rssNow();

    const connectStarted = performance.now();
    const visitors: Visitor[] = [];
    for (let at = 0; at < options.visitors; at += 100) {
      visitors.push(...(await Promise.all(Array.from({ length: Math.min(100, options.visitors - at) }, () => Visitor.connect(url, token)))));
    }
    const connectSeconds = (performance.now() - connectStarted) / 1000;
    const rssConnected = await rssNow();

    child.send('sample:start');
    await reply('sampling');
    const latencies: number[] = [];
    const errors = new Map<string, number>();
    let cited = 0;
    const started = performance.now();
    await Promise.all(
      visitors.map(async (visitor, n) => {
        for (let m = 0; m < options.messages; m += 1) {
          const turn = await visitor.ask(QUESTIONS[(n + m) % QUESTIONS.length]);
          if (turn.firstDeltaMs !== null) latencies.push(turn.firstDeltaMs);
          if (turn.cited) cited += 1;
          if (turn.error !== null) errors.set(turn.error, (errors.get(turn.error) ?? 0) + 1);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    child.send('sample:stop');
    const usage = await reply('usage');
    for (const visitor of visitors) visitor.close();
    const messages = options.visitors * options.messages;
    const mb = (bytes: number): number => bytes / (1024 * 1024);
    return {
      server: kind,
      connectSeconds,
      messages,
      seconds,
      latencies: latencies.sort((a, b) => a - b),
      cited,
      errors,
      rssIdleMb: mb(rssIdle),
      rssConnectedMb: mb(rssConnected),
      rssPeakMb: mb(usage.rss_peak),
      cpuUsPerMessage: (usage.cpu_user_us + usage.cpu_system_us) / messages,
    };
  } finally {
    child.disconnect();
    await exited;
  }
}

/** The soft and hard limits of open files (`ulimit -Sn`, `ulimit -Hn`); Infinity for unlimited. */
function openFileLimits(): { soft: number; hard: number } {
  const read = (flag: string): number => {
    const value = execFileSync('/bin/sh', ['-c', `ulimit ${flag}`], { encoding: 'utf8' }).trim();
    return value === 'unlimited' ? Infinity : Number(value);
  };
  return { soft: read('-Sn'), hard: read('-Hn') };
}

export async function run(args: string[]): Promise<void> {
  const options = parseOptions(args);
  // Each visitor holds a descriptor here and one in the server; both processes need room for them.
  const needed = options.visitors + 1024;
  const limits = openFileLimits();
  if (limits.soft < needed) {
    if (args.includes('--raised') || limits.hard < needed) {
      console.error(`open files: ${options.visitors} visitors need ulimit -n >= ${needed} (soft ${limits.soft}, hard ${limits.hard}); raise the hard limit (as root: ulimit -Hn ${needed}) or run fewer --visitors`);
      process.exitCode = 2;
      return;
    }
    console.log(`open files: soft limit ${limits.soft} < ${needed}: running again under ulimit -n ${needed} (hard limit ${limits.hard})`);
    const again = spawnSync('/bin/sh', ['-c', `ulimit -n ${needed} && exec "$0" "$@"`, process.execPath, path.join(__dirname, 'main.js'), 'ws', ...args, '--raised'], { stdio: 'inherit' });
    process.exitCode = again.status ?? 1;
    return;
  }

  console.log(
    `ws bench: ${options.visitors} visitors x ${options.messages} messages, ${options.documents} documents, SQLITE_SYNCHRONOUS=${SYNCHRONOUS}, ${options.rounds} round(s); ` +
      `open files soft ${limits.soft}; ${os.cpus().length} CPUs, load ${os.loadavg().map((load) => load.toFixed(1)).join(' ')}, Node ${process.version}`,
  );
  const results: RunResult[] = [];
  for (let round = 0; round < options.rounds; round += 1) {
    for (const kind of ['reference', 'platform'] as const) {
      const result = await runServer(kind, options);
      results.push(result);
      report([result]);
    }
  }
  console.log('');
  report(results, true);
  const platform = results.filter((result) => result.server === 'platform');
  const reference = results.filter((result) => result.server === 'reference');
  if (options.profile) console.log(`CPU profile of the platform's process: ${PROFILE_DIR}`);
  const rate = (list: RunResult[]): number => list.reduce((sum, result) => sum + result.messages / result.seconds, 0) / list.length;
  console.log(`\nplatform / reference messages/s: ${(rate(platform) / rate(reference)).toFixed(2)}`);
}

function report(results: RunResult[], header = false): void {
  const lines: string[] = [];
  if (header) {
    lines.push('| server | connect s | messages | messages/s | first delta p50 ms | p99 ms | max ms | cited | errors | server CPU µs/message | RSS idle MB | RSS with sockets MB | RSS peak MB |');
    lines.push('|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|');
  }
  for (const result of results) {
    const errors = [...result.errors].map(([code, count]) => `${code} ${count}`).join(', ') || 'none';
    lines.push(
      `| ${result.server} | ${result.connectSeconds.toFixed(2)} | ${result.messages} | ${Math.round(result.messages / result.seconds)} | ${percentile(result.latencies, 50).toFixed(1)} | ${percentile(result.latencies, 99).toFixed(1)} | ${result.latencies.at(-1)?.toFixed(1) ?? '-'} | ${result.cited} | ${errors} | ${Math.round(result.cpuUsPerMessage)} | ${result.rssIdleMb.toFixed(0)} | ${result.rssConnectedMb.toFixed(0)} | ${result.rssPeakMb.toFixed(0)} |`,
    );
  }
  console.log(lines.join('\n'));
}
