// The client's address behind reverse proxies (TRUST_PROXY_HOPS), for what is not served by Koa
// (the widget's WebSocket upgrades). The same rule as Koa's `proxy` with `maxIpsCount`: of
// X-Forwarded-For, only the last `hops` entries are trusted (those the platform's own proxies
// appended), and the client is the first of them; anything a client wrote before them is ignored.

import type { IncomingMessage } from 'node:http';

export function clientIpOf(request: Pick<IncomingMessage, 'headers' | 'socket'>, trustProxyHops: number): string | null {
  const own = request.socket.remoteAddress ?? null;
  if (trustProxyHops <= 0) return own;
  const header = request.headers['x-forwarded-for'];
  const forwarded = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  return forwarded.slice(-trustProxyHops)[0] ?? own;
}
