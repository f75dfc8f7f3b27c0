// The receivers' verify helper (shared/webhooks/verify.ts), the SSRF address rules and the retry schedule.
import { afterFailure, retryDelaySeconds, shouldDisable } from '../../shared/webhooks/backoff';
import { classifyAddress, parseEndpointUrl, UnsafeUrlError } from '../../shared/webhooks/ssrf';
import { computeSignature, signatureHeader, verifyWebhook } from '../../shared/webhooks/verify';

const secret = 'whsec_test-secret';
const body = '{"id":"evt_1","type":"member.created","created_at":1700000000,"data":{"id":"m1"}}';

describe('verifyWebhook', () => {
  const t = 1_700_000_000;
  const header = signatureHeader(body, secret, t);

  it('accepts a fresh, untampered delivery (string or Buffer body)', () => {
    expect(header).toBe(`t=${t},v1=${computeSignature(body, t, secret)}`);
    expect(verifyWebhook(body, header, secret, { now: t })).toEqual({ ok: true, timestamp: t });
    expect(verifyWebhook(Buffer.from(body), header, secret, { now: t + 299 })).toEqual({ ok: true, timestamp: t });
  });

  it('rejects timestamps older (or further ahead) than 5 minutes', () => {
    expect(verifyWebhook(body, header, secret, { now: t + 301 })).toEqual({ ok: false, reason: 'stale' });
    expect(verifyWebhook(body, header, secret, { now: t - 301 })).toEqual({ ok: false, reason: 'stale' });
  });

  it('rejects a tampered body, another secret, or a re-signed timestamp', () => {
    expect(verifyWebhook(body.replace('m1', 'm2'), header, secret, { now: t })).toEqual({ ok: false, reason: 'mismatch' });
    expect(verifyWebhook(body, header, 'whsec_other', { now: t })).toEqual({ ok: false, reason: 'mismatch' });
    const moved = header.replace(`t=${t}`, `t=${t + 10}`);
    expect(verifyWebhook(body, moved, secret, { now: t + 10 })).toEqual({ ok: false, reason: 'mismatch' });
  });

  it('rejects missing and malformed headers; accepts any matching v1 of several', () => {
    expect(verifyWebhook(body, undefined, secret)).toEqual({ ok: false, reason: 'missing' });
    for (const bad of ['garbage', `t=${t}`, `v1=${'a'.repeat(64)}`, `t=abc,v1=${'a'.repeat(64)}`, `t=${t},v1=xyz`]) {
      expect(verifyWebhook(body, bad, secret, { now: t })).toEqual({ ok: false, reason: 'malformed' });
    }
    const rotated = `t=${t},v1=${'0'.repeat(64)},v1=${computeSignature(body, t, secret)}`;
    expect(verifyWebhook(body, rotated, secret, { now: t }).ok).toBe(true);
  });
});

describe('SSRF address classes', () => {
  it.each([
    ['93.184.216.34', 'public'],
    ['2606:4700:4700::1111', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.9.9.9', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['10.1.2.3', 'blocked'],
    ['172.31.255.255', 'blocked'],
    ['192.168.0.1', 'blocked'],
    ['169.254.169.254', 'blocked'],
    ['100.64.0.1', 'blocked'],
    ['100.127.255.255', 'blocked'],
    ['0.0.0.0', 'blocked'],
    ['224.0.0.251', 'blocked'],
    ['255.255.255.255', 'blocked'],
    ['::', 'blocked'],
    ['fd12:3456::1', 'blocked'],
    ['fc00::1', 'blocked'],
    ['fe80::1', 'blocked'],
    ['ff02::1', 'blocked'],
    ['::ffff:10.0.0.1', 'blocked'],
    ['::ffff:a9fe:a9fe', 'blocked'],
    ['64:ff9b::192.168.1.1', 'blocked'],
    ['not-an-ip', 'blocked'],
  ])('%s is %s', (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });

  // Issue 11 item 8: IPv6 forms that carry an IPv4 address, in every notation (compressed, expanded, dotted
  // tail, upper case, leading zeros). IPv4-compatible (::/96), IPv4-translated (::ffff:0:0:0/96) and the
  // local-use NAT64 prefix (64:ff9b:1::/48) are refused whatever they carry; IPv4-mapped (::ffff:0:0/96) and
  // the well-known NAT64 prefix (64:ff9b::/96) are judged by the IPv4 address they carry.
  it.each([
    // ::/96, IPv4-compatible
    '::a9fe:a9fe',
    '::169.254.169.254',
    '::10.0.0.1',
    '::a00:1',
    '0:0:0:0:0:0:a00:1',
    '0000:0000:0000:0000:0000:0000:0a00:0001',
    '::A9FE:A9FE',
    '0:0:0:0:0:0:10.0.0.1',
    '::8.8.8.8',
    '::0808:0808',
    '::127.0.0.1',
    '::2',
    // ::ffff:0:0:0/96, IPv4-translated
    '::ffff:0:a9fe:a9fe',
    '::ffff:0:169.254.169.254',
    '0:0:0:0:ffff:0:a9fe:a9fe',
    '::FFFF:0:A9FE:A9FE',
    '::ffff:0:8.8.8.8',
    '0000:0000:0000:0000:ffff:0000:0808:0808',
    // 64:ff9b:1::/48, local-use NAT64
    '64:ff9b:1::a9fe:a9fe',
    '64:ff9b:1::169.254.169.254',
    '64:FF9B:1::A9FE:A9FE',
    '0064:ff9b:0001:0000:0000:0000:a9fe:a9fe',
    '64:ff9b:1:ffff:ffff:ffff:808:808',
    '64:ff9b:1::8.8.8.8',
    // ::ffff:0:0/96 and 64:ff9b::/96 carrying a private address, in other notations
    '::ffff:a9fe:a9fe',
    '::FFFF:A9FE:A9FE',
    '0:0:0:0:0:ffff:169.254.169.254',
    '0000:0000:0000:0000:0000:ffff:0a00:0001',
    '64:ff9b::a9fe:a9fe',
    '64:FF9B::10.0.0.1',
    '0064:ff9b:0000:0000:0000:0000:c0a8:0101',
    '64:ff9b::0.0.0.0',
  ])('%s is blocked', (address) => {
    expect(classifyAddress(address)).toBe('blocked');
  });

  it.each([
    ['::ffff:8.8.8.8', 'public'],
    ['::ffff:808:808', 'public'],
    ['0:0:0:0:0:FFFF:0808:0808', 'public'],
    ['64:ff9b::8.8.8.8', 'public'],
    ['64:ff9b::808:808', 'public'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['0000:0000:0000:0000:0000:0000:0000:0001', 'loopback'],
    ['::FFFF:127.0.0.1', 'loopback'],
    ['0:0:0:0:0:0:0:0', 'blocked'],
  ])('%s is %s', (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });

  it('URLs: https only, http only for loopback in local mode, no credentials', () => {
    expect(parseEndpointUrl('https://hooks.example.com/x', false).hostname).toBe('hooks.example.com');
    expect(() => parseEndpointUrl('http://hooks.example.com/x', true)).toThrow(UnsafeUrlError);
    expect(() => parseEndpointUrl('http://127.0.0.1:8080/x', false)).toThrow('The URL must use https.');
    expect(parseEndpointUrl('http://127.0.0.1:8080/x', true).port).toBe('8080');
    expect(parseEndpointUrl('http://localhost/x', true).hostname).toBe('localhost');
    expect(() => parseEndpointUrl('https://a:b@example.com/', false)).toThrow('The URL must not contain credentials.');
    expect(() => parseEndpointUrl('gopher://example.com/', false)).toThrow('Enter a valid URL.');
  });
});

describe('retry schedule', () => {
  const cfg = { retryBaseSeconds: 60, maxRetrySeconds: 6 * 3600, giveUpSeconds: 3 * 24 * 3600 };

  it('doubles from the base delay up to the ceiling', () => {
    expect([1, 2, 3, 4, 5, 9, 10, 11, 50].map((n) => retryDelaySeconds(n, cfg))).toEqual([
      60, 120, 240, 480, 960, 15_360, 21_600, 21_600, 21_600,
    ]);
  });

  it('gives up when the next attempt would fall after 3 days', () => {
    const created = 0;
    expect(afterFailure(1, created, 1000, cfg)).toEqual({ retryAtMs: 61_000 });
    expect(afterFailure(12, created, (3 * 24 * 3600 - 3600) * 1000, cfg)).toEqual({ giveUp: true });
  });

  it('disables an endpoint failing for the whole give-up period', () => {
    expect(shouldDisable(null, 10 ** 12, cfg)).toBe(false);
    expect(shouldDisable(0, cfg.giveUpSeconds * 1000 - 1, cfg)).toBe(false);
    expect(shouldDisable(0, cfg.giveUpSeconds * 1000, cfg)).toBe(true);
  });
});
