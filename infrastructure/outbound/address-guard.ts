// The platform's one outbound-request guard, against server-side request forgery, for every
// address a tenant gives the platform to call (handoff webhook, CRM, integrations' base URLs,
// OpenAPI documents fetched by URL, connector servers): the platform must not become a way into
// its own network or its cloud's metadata service. Any new outbound call goes through it:
// `refusalOfForm`/`refusalOf` before the call, and `lookup` handed to node:http/https on it.
// Refused, unless the operator allows it:
//   - a scheme other than https (plain http only with `allowInsecureUrls`);
//   - any address in a private, loopback, link-local, shared (CGNAT), metadata, multicast or
//     otherwise reserved range, IPv4 or IPv6, IPv4-mapped forms included (only with
//     `allowPrivateNetworks`), whether the URL names it literally or a name resolves to it.
// A name is resolved when the address is given (`refusalOf`) and again when it is called
// (`lookup`, handed to node's http client), so a name pointed at an inside address after it
// was checked is refused on the call; the connection goes to the very addresses checked.
// A name that resolves to several addresses is refused when any of them is refused.
// Literal hosts are read by WHATWG URL parsing, which turns decimal (`2130706433`), octal
// (`0177.0.0.1`), hex (`0x7f.1`) and short (`127.1`) IPv4 forms into dotted quads and IPv6
// into its compressed form, so they are checked as the addresses they are; node's BlockList
// matches IPv4-mapped IPv6 (`::ffff:7f00:1`) against the IPv4 ranges.

import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOneOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import type { OutboundRefusal } from '../../application/ports/outbound-http';

export interface OutboundPolicy {
  /** Plain http:// allowed (OUTBOUND_ALLOW_INSECURE; development only). */
  allowInsecureUrls: boolean;
  /** Private, loopback, link-local and metadata addresses allowed (OUTBOUND_ALLOW_PRIVATE_NETWORKS; development, tests). */
  allowPrivateNetworks: boolean;
}

/** Resolves a name to every address it has, as `dns.lookup` with `all: true` does. */
export type Resolve = (hostname: string) => Promise<LookupAddress[]>;

const systemResolve: Resolve = (hostname) =>
  new Promise((resolve, reject) => dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))));

/** Ranges no outside service lives in (IANA special-purpose registries), metadata services among them. */
const REFUSED_RANGES: ReadonlyArray<[string, number, 'ipv4' | 'ipv6']> = [
  ['0.0.0.0', 8, 'ipv4'], // "this network"
  ['10.0.0.0', 8, 'ipv4'], // private
  ['100.64.0.0', 10, 'ipv4'], // shared address space (CGNAT); Alibaba's metadata service 100.100.100.200
  ['127.0.0.0', 8, 'ipv4'], // loopback
  ['169.254.0.0', 16, 'ipv4'], // link-local; AWS, GCP and Azure metadata 169.254.169.254
  ['172.16.0.0', 12, 'ipv4'], // private
  ['192.0.0.0', 24, 'ipv4'], // IETF protocol assignments
  ['192.0.2.0', 24, 'ipv4'], // documentation
  ['192.88.99.0', 24, 'ipv4'], // 6to4 relay anycast
  ['192.168.0.0', 16, 'ipv4'], // private
  ['198.18.0.0', 15, 'ipv4'], // benchmarking
  ['198.51.100.0', 24, 'ipv4'], // documentation
  ['203.0.113.0', 24, 'ipv4'], // documentation
  ['224.0.0.0', 4, 'ipv4'], // multicast
  ['240.0.0.0', 4, 'ipv4'], // reserved, and broadcast
  ['::', 128, 'ipv6'], // unspecified
  ['::1', 128, 'ipv6'], // loopback
  ['64:ff9b::', 96, 'ipv6'], // NAT64: an IPv4 address behind it (checked below too)
  ['64:ff9b:1::', 48, 'ipv6'], // local-use NAT64
  ['100::', 64, 'ipv6'], // discard
  ['2001::', 23, 'ipv6'], // IETF protocol assignments
  ['2001:db8::', 32, 'ipv6'], // documentation
  ['2002::', 16, 'ipv6'], // 6to4: an IPv4 address inside (checked below too)
  ['fc00::', 7, 'ipv6'], // unique local; AWS's IPv6 metadata fd00:ec2::254
  ['fe80::', 10, 'ipv6'], // link-local
  ['fec0::', 10, 'ipv6'], // site-local (deprecated)
  ['ff00::', 8, 'ipv6'], // multicast
];

const refused = new BlockList();
for (const [network, prefix, family] of REFUSED_RANGES) refused.addSubnet(network, prefix, family);

/** The IPv4 address an IPv6 address carries (NAT64 `64:ff9b::a.b.c.d`, 6to4 `2002:aabb:ccdd::`), if any. */
function embeddedIpv4(address: string): string | null {
  const groups = expandIpv6(address);
  if (!groups) return null;
  const v4 = (high: number, low: number): string => [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
  if (groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((group) => group === 0)) return v4(groups[6], groups[7]);
  if (groups[0] === 0x2002) return v4(groups[1], groups[2]);
  return null;
}

/** The eight 16-bit groups of an IPv6 address, or null. */
function expandIpv6(address: string): number[] | null {
  let text = address.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const parts = dotted[1].split('.').map(Number);
    text = text.slice(0, -dotted[1].length) + `${((parts[0] << 8) | parts[1]).toString(16)}:${((parts[2] << 8) | parts[3]).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const split = (part: string | undefined): string[] => (part ? part.split(':') : []);
  const left = split(head);
  const right = split(tail);
  const missing = 8 - left.length - right.length;
  if (text.includes('::') ? missing < 0 : left.length !== 8) return null;
  const groups = [...left, ...Array<string>(text.includes('::') ? missing : 0).fill('0'), ...right].map((group) => parseInt(group, 16));
  return groups.length === 8 && groups.every((group) => Number.isInteger(group) && group >= 0 && group <= 0xffff) ? groups : null;
}

/** Whether an IP address lies in a range the platform never calls without the operator's leave. */
export function isRefusedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return refused.check(address, 'ipv4');
  if (family !== 6) return true;
  // BlockList matches IPv4-mapped addresses (::ffff:a.b.c.d) against the IPv4 ranges itself.
  if (refused.check(address, 'ipv6')) {
    const inner = embeddedIpv4(address);
    // A NAT64 or 6to4 address is as good as the IPv4 address it carries.
    return inner === null ? true : isRefusedAddress(inner);
  }
  return false;
}

/** The host of a URL as node connects to it: IPv6 literals without their brackets. */
const hostOf = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, '$1');

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

export class AddressGuard {
  constructor(
    readonly policy: OutboundPolicy,
    private readonly resolve: Resolve = systemResolve,
  ) {}

  /** The checks that need no name resolution: the URL's form, its scheme, and an address it names literally. */
  refusalOfForm(url: string): { refusal: OutboundRefusal } | { url: URL } {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return { refusal: { reason: 'invalid_url', message: 'not an absolute URL' } };
    }
    if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && this.policy.allowInsecureUrls)) {
      return { refusal: { reason: 'insecure_url', message: `only https:// addresses are called${parsed.protocol === 'http:' ? ' (plain http is allowed only when the operator allows insecure URLs)' : ''}` } };
    }
    const host = hostOf(parsed);
    if (isIP(host) !== 0 && !this.policy.allowPrivateNetworks && isRefusedAddress(host)) return { refusal: privateAddress(host) };
    return { url: parsed };
  }

  /** Why the platform refuses to call `url`, resolving its name; null when it may. */
  async refusalOf(url: string): Promise<OutboundRefusal | null> {
    const form = this.refusalOfForm(url);
    if ('refusal' in form) return form.refusal;
    const host = hostOf(form.url);
    if (isIP(host) !== 0) return null;
    let addresses: LookupAddress[];
    try {
      addresses = await this.resolve(host);
    } catch {
      return { reason: 'unresolvable_host', message: `the host ${host} does not resolve` };
    }
    if (addresses.length === 0) return { reason: 'unresolvable_host', message: `the host ${host} does not resolve` };
    if (this.policy.allowPrivateNetworks) return null;
    const inside = addresses.find((entry) => isRefusedAddress(entry.address));
    return inside ? privateAddress(inside.address, host) : null;
  }

  /**
   * A `lookup` for node's http and https clients: resolves like dns.lookup and fails the
   * connection when an address is refused, so the call reaches only checked addresses.
   */
  readonly lookup = (hostname: string, options: LookupOneOptions | LookupAllOptions, callback: LookupCallback): void => {
    this.resolve(hostname).then(
      (all) => {
        const addresses = options.family === 4 || options.family === 6 ? all.filter((entry) => entry.family === options.family) : all;
        const inside = this.policy.allowPrivateNetworks ? undefined : addresses.find((entry) => isRefusedAddress(entry.address));
        if (addresses.length === 0) return callback(Object.assign(new Error(`the host ${hostname} does not resolve`), { code: 'ENOTFOUND' }), []);
        if (inside) return callback(Object.assign(new Error(privateAddress(inside.address, hostname).message), { code: 'EREFUSEDADDRESS' }), []);
        if (options.all) return callback(null, addresses);
        return callback(null, addresses[0].address, addresses[0].family);
      },
      (error: NodeJS.ErrnoException) => callback(error, []),
    );
  };
}

function privateAddress(address: string, host?: string): OutboundRefusal {
  return {
    reason: 'private_address',
    message: `${host ? `the host ${host} resolves to ${address}, ` : `${address} is `}an address in a private, loopback, link-local or reserved range, which the platform does not call`,
  };
}

/** The code node's http client reports when the guard's lookup refused an address. */
export const REFUSED_ADDRESS_CODE = 'EREFUSEDADDRESS';
