// The client's address behind reverse proxies (TRUST_PROXY_HOPS), for what is not served by Koa
// (the widget's WebSocket upgrades). The same rule as Koa's `proxy` with `maxIpsCount`: of
// X-Forwarded-For, only the last `hops` entries are trusted (those the platform's own proxies
// appended), and the client is the first of them; anything a client wrote before them is ignored.
// And how much of it events record (EVENT_CLIENT_IP): the rate limits and the sessions always
// see it whole.

import { isIPv4, isIPv6 } from 'node:net';
import type { IncomingMessage } from 'node:http';

/** How much of the client's address events record (EVENT_CLIENT_IP). */
export type EventClientIp = 'full' | 'truncated' | 'none';

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

/**
 * The client's address as events record it: whole; truncated to its network (an IPv4 address's
 * last byte zeroed, an IPv6 address cut to its first 48 bits, as analytics tools anonymize); or
 * not at all. An address that cannot be read is not recorded truncated.
 */
export function recordedIpOf(ip: string | null, policy: EventClientIp): string | null {
  if (policy === 'none' || ip === null) return null;
  if (policy === 'full') return ip;
  if (isIPv4(ip)) return ip.replace(/\.\d+$/, '.0');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped && isIPv4(mapped[1])) return `::ffff:${mapped[1].replace(/\.\d+$/, '.0')}`;
  if (!isIPv6(ip)) return null;
  return `${expandedIpv6(ip).slice(0, 3).join(':')}::`;
}

/** The eight groups of an IPv6 address (a zone and an embedded IPv4 tail dropped to zeros: only the first three are kept). */
function expandedIpv6(ip: string): string[] {
  const [head, tail = ''] = ip.split('%')[0].split('::');
  const groupsOf = (part: string): string[] => (part === '' ? [] : part.split(':').map((group) => (group.includes('.') ? '0' : group.toLowerCase().replace(/^0+(?=.)/, ''))));
  const first = groupsOf(head);
  const last = ip.includes('::') ? groupsOf(tail) : [];
  const zeros = Array.from({ length: Math.max(0, 8 - first.length - last.length) }, () => '0');
  return [...first, ...(ip.includes('::') ? zeros : []), ...last];
}
