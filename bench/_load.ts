// Load generation shared by the HTTP benches: autocannon against servers in a child process,
// each server's load cut into slices taken in rotation so the drift of a shared machine's
// CPU is spread over all of them instead of landing on whichever runs last. The child's CPU
// time is read around every slice, so each server's CPU per request is reported too.

import { fork } from 'node:child_process';
import path from 'node:path';

/** CPU time the server process spent, in microseconds (process.cpuUsage()). */
export interface CpuTime {
  user: number;
  system: number;
}

export interface ForkedServers<Message> {
  message: Message;
  /** The server process's CPU time so far. */
  cpuTime(): Promise<CpuTime>;
  stop(): void;
}

const CPU_TIME_REQUEST = 'bench:cpu-time';

/**
 * Runs `npm run bench -- <bench> --serve` in a child process, which sends one message once
 * its servers listen; resolves with that message, a way to read the child's CPU time, and a
 * stop function.
 */
export function forkServers<Message>(bench: string, env: NodeJS.ProcessEnv = {}): Promise<ForkedServers<Message>> {
  const child = fork(path.join(__dirname, 'main.js'), [bench, '--serve'], { env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
    child.once('message', (message) => {
      resolve({
        message: message as Message,
        cpuTime: () =>
          new Promise<CpuTime>((answer) => {
            child.once('message', (usage) => answer(usage as CpuTime));
            child.send(CPU_TIME_REQUEST);
          }),
        stop: () => child.disconnect(),
      });
    });
  });
}

/** In the server process: answers the parent's CPU time requests. */
export function answerCpuTimeRequests(): void {
  process.on('message', (message) => {
    if (message === CPU_TIME_REQUEST) process.send?.(process.cpuUsage());
  });
}

export interface LoadResult {
  requests: { average: number; total: number };
  latency: { p99: number; average: number };
  non2xx: number;
  errors: number;
  timeouts: number;
}

export interface LoadTarget {
  name: string;
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
}

// autocannon ships no type declarations; this is the one call the benches make.
const autocannon = require('autocannon') as (options: Omit<LoadTarget, 'name'> & { connections: number; duration: number }) => Promise<LoadResult>;

export interface Measurement {
  name: string;
  requests: number;
  seconds: number;
  p99s: number[];
  /** The server process's CPU time during this target's slices, in microseconds. */
  cpu: CpuTime;
}

export function option(args: string[], name: string, fallback: number): number {
  const index = args.indexOf(`--${name}`);
  const value = index === -1 ? undefined : Number(args[index + 1]);
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : fallback;
}

export interface RotationOptions {
  connections: number;
  duration: number;
  slices: number;
  warmup: number;
}

/** `--duration 10 --slices 5 --connections 50 --warmup 2`, the options of every HTTP bench. */
export function rotationOptions(args: string[]): RotationOptions {
  return {
    duration: option(args, 'duration', 10),
    slices: Math.round(option(args, 'slices', 5)),
    connections: option(args, 'connections', 50),
    warmup: option(args, 'warmup', 2),
  };
}

async function load(target: LoadTarget, connections: number, duration: number): Promise<LoadResult> {
  const { name: _name, ...request } = target;
  const result = await autocannon({ ...request, connections, duration });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${target.name}: ${result.non2xx} non-2xx answers and ${result.errors} errors; the bench is not measuring what it should`);
  }
  return result;
}

/**
 * Warms every target up, then loads each for `duration` seconds in `slices` rotating slices.
 * The server process's CPU time is read around each slice, so each target also gets the CPU
 * its server spent per request: a measure of the server alone, where throughput also depends
 * on the load generator and the kernel sharing the same cores.
 */
export async function measureInRotation(targets: LoadTarget[], options: RotationOptions, cpuTime: () => Promise<CpuTime>): Promise<Measurement[]> {
  for (const target of targets) await load(target, options.connections, options.warmup);
  const measurements = targets.map((target): Measurement => ({ name: target.name, requests: 0, seconds: 0, p99s: [], cpu: { user: 0, system: 0 } }));
  const sliceSeconds = options.duration / options.slices;
  for (let slice = 0; slice < options.slices; slice += 1) {
    for (const [index, target] of targets.entries()) {
      const before = await cpuTime();
      const result = await load(target, options.connections, sliceSeconds);
      const after = await cpuTime();
      const measurement = measurements[index];
      measurement.requests += result.requests.total;
      measurement.seconds += sliceSeconds;
      measurement.p99s.push(result.latency.p99);
      measurement.cpu.user += after.user - before.user;
      measurement.cpu.system += after.system - before.system;
    }
  }
  return measurements;
}

/** Server CPU per request in microseconds: user (JavaScript and Node) and system (kernel). */
export function cpuPerRequest(measurement: Measurement): CpuTime {
  return { user: measurement.cpu.user / measurement.requests, system: measurement.cpu.system / measurement.requests };
}

export function requestsPerSecond(measurement: Measurement): number {
  return measurement.requests / measurement.seconds;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

export function printTable(measurements: Measurement[]): void {
  console.log('');
  console.log('| server | req/s | p99 ms | server CPU µs/req (user + system) |');
  console.log('|---|---:|---:|---:|');
  for (const measurement of measurements) {
    const cpu = cpuPerRequest(measurement);
    console.log(
      `| ${measurement.name} | ${Math.round(requestsPerSecond(measurement))} | ${median(measurement.p99s)} | ${cpu.user.toFixed(1)} + ${cpu.system.toFixed(1)} = ${(cpu.user + cpu.system).toFixed(1)} |`,
    );
  }
  console.log('');
}
