// Endpoint URLs must not let a tenant make this service call into private networks (SSRF). A URL is
// refused unless it is https (http only for loopback hosts, and only with the local-mode flag), and
// unless EVERY address its host resolves to is public: loopback (unless local mode), private (RFC 1918),
// CGNAT, link-local (the cloud metadata service lives there), multicast, unspecified, reserved,
// documentation ranges, IPv6 ULA and link-local, and IPv4 embedded in IPv6 are all refused. The check
// runs at registration and again at every delivery, and the delivery connects to the addresses it
// checked (no second DNS answer can slip in: DNS rebinding); redirects are never followed.
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

export class UnsafeUrlError extends Error {
  override readonly name = 'UnsafeUrlError';
}

const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['169.254.0.0', 16], ['172.16.0.0', 12], ['192.0.0.0', 24],
  ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24],
  ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8], ['2001:db8::', 32], ['100::', 64], ['2001::', 32], ['2002::', 16],
] as const) blocked.addSubnet(net, prefix, 'ipv6');

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

/** The IPv4 address inside an IPv4-mapped / NAT64 / IPv4-compatible IPv6 address, if any. */
function embeddedIpv4(address: string): string | null {
  const lower = address.toLowerCase();
  const m = /^(?:::ffff:|64:ff9b::|::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (m) return m[1] ?? null;
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex) {
    const hi = parseInt(hex[1] ?? '0', 16);
    const lo = parseInt(hex[2] ?? '0', 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return null;
}

export type AddressClass = 'public' | 'loopback' | 'blocked';

export function classifyAddress(address: string): AddressClass {
  const family = isIP(address);
  if (family === 0) return 'blocked';
  if (family === 6) {
    const v4 = embeddedIpv4(address);
    if (v4) return classifyAddress(v4);
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
  if (url.protocol === 'http:' && !addresses.every((a) => classifyAddress(a.address) === 'loopback')) throw new UnsafeUrlError('The URL must use https.');
  return addresses;
}
