// Who clicked: the browser script's random visitor id, or, without one, the caller's IP and user agent.
// Only a digest is stored (the click marker's key), never the IP or the id itself.
import { createHash } from 'node:crypto';

export function visitorHash(input: { visitorId?: string | undefined; ip: string; userAgent: string }): string {
  const source = input.visitorId ? `id:${input.visitorId}` : `ip:${input.ip}\u0000ua:${input.userAgent}`;
  return createHash('sha256').update(source, 'utf8').digest('base64url').slice(0, 22);
}

/** The digest standing for a client IP in keys (the IP itself is never stored). */
export function ipHash(ip: string): string {
  return createHash('sha256').update(`ip:${ip}`, 'utf8').digest('base64url').slice(0, 22);
}
