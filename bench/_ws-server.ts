// The server process of the ws bench (bench/ws.ts forks it: `_ws-server.js platform|reference
// <documents>`): serves, tells the parent where, and answers its sampling of RSS and CPU until
// it disconnects. Each kind loads only its own modules, so the RSS is that server's.

import type http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Served {
  url: string;
  token: string;
  close(): Promise<void>;
}

export type Listening = { kind: 'listening'; url: string; token: string };
export type Usage = { kind: 'usage'; rss_peak: number; rss_now: number; cpu_user_us: number; cpu_system_us: number };

export async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', 1024, resolve));
  return `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function serve(kind: string, documents: number): Promise<void> {
  const synchronous = (process.env.SQLITE_SYNCHRONOUS ?? 'full') as 'full' | 'normal' | 'off';
  // Required here, not imported: the reference must not load the platform's modules.
  const served: Served =
    kind === 'platform'
      ? await (require('./_ws-platform') as typeof import('./_ws-platform')).servePlatform(documents, synchronous)
      : await (require('./_ws-reference') as typeof import('./_ws-reference')).serveReference(documents, synchronous);
  let sampler: NodeJS.Timeout | null = null;
  let peak = 0;
  let cpuFrom = process.cpuUsage();
  process.on('message', (message) => {
    if (message === 'sample:start') {
      peak = process.memoryUsage().rss;
      cpuFrom = process.cpuUsage();
      sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
      process.send!({ kind: 'sampling' });
    } else if (message === 'sample:stop') {
      if (sampler) clearInterval(sampler);
      const rss = process.memoryUsage().rss;
      const cpu = process.cpuUsage(cpuFrom);
      process.send!({ kind: 'usage', rss_peak: Math.max(peak, rss), rss_now: rss, cpu_user_us: cpu.user, cpu_system_us: cpu.system } satisfies Usage);
    }
  });
  process.once('disconnect', () => {
    void served.close().finally(() => process.exit(0));
  });
  process.send!({ kind: 'listening', url: served.url, token: served.token } satisfies Listening);
}

if (require.main === module) {
  serve(process.argv[2] ?? 'platform', Number(process.argv[3] ?? 5)).catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
