// Endpoint URLs must not let a tenant make this service call into private networks (SSRF). A URL is
// refused unless it is https (http only for loopback hosts, and only with the local-mode flag), and
// unless EVERY address its host resolves to is public: loopback (unless local mode), private (RFC 1918),
// CGNAT, link-local (the cloud metadata service lives there), multicast, unspecified, reserved,
// documentation ranges, IPv6 ULA and link-local are refused; an IPv6 address carrying an IPv4 one is judged
// by that IPv4 address (mapped, NAT64) or refused outright (IPv4-compatible, translated, local-use NAT64). The check
// runs at registration and again at every delivery, and the delivery connects to the addresses it
// checked (no second DNS answer can slip in: DNS rebinding); redirects are never followed.
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

export class UnsafeUrlError extends Error {
  override readonly name = 'UnsafeUrlError';
}

const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
  ['2001:db8::', 32],
  ['100::', 64],
  ['2001::', 32],
  ['2002::', 16],
] as const)
  blocked.addSubnet(net, prefix, 'ipv6');

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

/** The eight 16-bit groups of an IPv6 address in any notation (compressed, expanded, dotted tail, any case). */
function ipv6Groups(address: string): number[] | null {
  let text = address.toLowerCase().replace(/%.*$/, '');
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const part = (s: string | undefined) => (s ? s.split(':').map((h) => parseInt(h, 16)) : []);
  const head = part(halves[0]);
  const tail = part(halves[1]);
  const groups = halves.length === 2 ? [...head, ...Array<number>(8 - head.length - tail.length).fill(0), ...tail] : head;
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

const zero = (groups: number[]) => groups.every((g) => g === 0);
const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

/**
 * How an IPv6 address that carries an IPv4 address is judged: by its IPv4 address (IPv4-mapped
 * `::ffff:0:0/96`, the well-known NAT64 prefix `64:ff9b::/96`), or refused outright whatever it carries
 * (IPv4-compatible `::/96`, deprecated; IPv4-translated `::ffff:0:0:0/96`; the local-use NAT64 prefix
 * `64:ff9b:1::/48`, which a network may route anywhere). Null: no IPv4 inside.
 */
function embeddedIpv4(groups: number[]): string | 'blocked' | null {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = groups as [number, number, number, number, number, number, number, number];
  if (zero([g0, g1, g2, g3, g4]) && g5 === 0xffff) return v4(g6, g7); // ::ffff:a.b.c.d (mapped)
  if (zero([g0, g1, g2, g3]) && g4 === 0xffff && g5 === 0) return 'blocked'; // ::ffff:0:a.b.c.d (translated)
  if (zero([g0, g1, g2, g3, g4, g5])) return g6 === 0 && g7 === 1 ? null : 'blocked'; // ::a.b.c.d (compatible); ::1 is loopback
  if (g0 === 0x64 && g1 === 0xff9b && zero([g2, g3, g4, g5])) return v4(g6, g7); // 64:ff9b::a.b.c.d
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 1) return 'blocked'; // 64:ff9b:1::/48
  return null;
}

export type AddressClass = 'public' | 'loopback' | 'blocked';

export function classifyAddress(address: string): AddressClass {
  const family = isIP(address);
  if (family === 0) return 'blocked';
  if (family === 6) {
    const groups = ipv6Groups(address);
    if (!groups) return 'blocked';
    const inner = embeddedIpv4(groups);
    if (inner === 'blocked') return 'blocked';
    if (inner) return classifyAddress(inner);
  }
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (loopback.check(address, type)) return 'loopback';
  return blocked.check(address, type) ? 'blocked' : 'public';
}

/** Parses and checks a URL's form (scheme, no credentials); throws UnsafeUrlError with the reason. */
export function parseEndpointUrl(raw: string, allowLoopback: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UnsafeUrlError('Enter a valid URL.');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new UnsafeUrlError('Enter a valid URL.');
  if (url.username || url.password) throw new UnsafeUrlError('The URL must not contain credentials.');
  if (url.protocol === 'http:' && !(allowLoopback && isLoopbackName(url.hostname))) throw new UnsafeUrlError('The URL must use https.');
  return url;
}

function isLoopbackName(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || (isIP(host) !== 0 && classifyAddress(host) === 'loopback');
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves the URL's host and checks every address; the addresses to connect to. */
export async function resolveSafely(url: URL, allowLoopback: boolean): Promise<ResolvedAddress[]> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: ResolvedAddress[];
  if (isIP(host)) {
    addresses = [{ address: host, family: isIP(host) as 4 | 6 }];
  } else {
    try {
      addresses = (await lookup(host, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family as 4 | 6 }));
    } catch {
      throw new UnsafeUrlError("The URL's host could not be resolved.");
    }
  }
  if (addresses.length === 0) throw new UnsafeUrlError("The URL's host could not be resolved.");
  for (const a of addresses) {
    const kind = classifyAddress(a.address);
    if (kind === 'blocked' || (kind === 'loopback' && !allowLoopback)) {
      throw new UnsafeUrlError("The URL's host resolves to a private, loopback, link-local or reserved address.");
    }
  }
  if (url.protocol === 'http:' && !addresses.every((a) => classifyAddress(a.address) === 'loopback'))
    throw new UnsafeUrlError('The URL must use https.');
  return addresses;
}
