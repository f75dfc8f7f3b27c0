// Chargebee's webhook check (shared/providers/chargebee/signature.ts): Chargebee signs nothing, so the intake
// compares the HTTP Basic pair with the account's `<username>:<password>` in constant time. Good, wrong
// password, wrong user, missing, malformed, another scheme, a huge header; the intake's verdict queues the
// body alone (never the Authorization header).
import {
  AUTH_HEADER,
  basicAuthHeader,
  chargebeeVerifier,
  verifyChargebeeAuth,
  webhook,
  webhookSecretOf,
} from '../../shared/providers/chargebee/signature';

const secret = webhookSecretOf('refloop', 'a-random-password-of-32-characters!');
const body = JSON.stringify({ id: 'ev_16BPgETyVrQbiGhA', object: 'event', event_type: 'subscription_created', content: {} });
const verify = (header: string | undefined, rawBody = body, key = secret) =>
  verifyChargebeeAuth({ headers: { [AUTH_HEADER]: header }, rawBody }, key);
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

describe('verifyChargebeeAuth', () => {
  it('the right pair passes and names the event id (`ev_…`) for de-duplication', () => {
    expect(basicAuthHeader(secret)).toBe(`Basic ${b64('refloop:a-random-password-of-32-characters!')}`);
    expect(verify(basicAuthHeader(secret))).toEqual({ ok: true, eventId: 'ev_16BPgETyVrQbiGhA' });
    // The scheme is case-insensitive (RFC 7617); the event id is null when the body is not an event.
    expect(verify(`basic ${b64(secret)}`)).toEqual({ ok: true, eventId: 'ev_16BPgETyVrQbiGhA' });
    expect(verify(basicAuthHeader(secret), '{not json')).toEqual({ ok: true, eventId: null });
    expect(verify(basicAuthHeader(secret), JSON.stringify({ id: 'ev_1', object: 'subscription' }))).toEqual({ ok: true, eventId: null });
  });

  it('a password may contain ":" (only the first one splits the pair): compared whole', () => {
    const withColon = webhookSecretOf('refloop', 'pass:word:with:colons-000000000');
    expect(verify(basicAuthHeader(withColon), body, withColon)).toMatchObject({ ok: true });
  });

  it.each([
    ['a wrong password', basicAuthHeader(webhookSecretOf('refloop', 'a-random-password-of-32-characters?'))],
    ['a wrong user', basicAuthHeader(webhookSecretOf('refloop2', 'a-random-password-of-32-characters!'))],
    ['the password alone', basicAuthHeader('a-random-password-of-32-characters!')],
    ['an empty pair', `Basic ${b64(':')}`],
    ['a prefix of the secret', basicAuthHeader(secret.slice(0, -1))],
    ['the secret and more', basicAuthHeader(`${secret}x`)],
    ['not base64', 'Basic %%%notbase64%%%'],
    ['no credentials after the scheme', 'Basic'],
    ['a Bearer token', `Bearer ${b64(secret)}`],
    ['a Digest header', 'Digest username="refloop", realm="x", response="00"'],
    ['the pair in clear', `Basic ${secret}`],
    ['a huge header', `Basic ${'A'.repeat(100_000)}`],
  ])('%s is a bad signature', (_label, header) => {
    expect(verify(header)).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('no header, or a blank one, is a missing signature', () => {
    expect(verify(undefined)).toEqual({ ok: false, reason: 'missing_signature' });
    expect(verify('  ')).toEqual({ ok: false, reason: 'missing_signature' });
  });

  it('an account without a stored pair verifies nothing', () => {
    expect(verify(`Basic ${b64('')}`, body, '')).toEqual({ ok: false, reason: 'bad_signature' });
    expect(verify(basicAuthHeader(secret), body, '')).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('the port verifier says the same; nothing is timed (no stale_timestamp, whatever the clock)', () => {
    const raw = { headers: { authorization: basicAuthHeader(secret) }, rawBody: body };
    expect(chargebeeVerifier.kind).toBe('chargebee');
    expect(chargebeeVerifier.verify(raw, secret, 0)).toMatchObject({ ok: true });
    expect(chargebeeVerifier.verify(raw, secret, Date.now() + 365 * 86_400_000)).toMatchObject({ ok: true });
  });
});

describe('the intake check (definition webhook)', () => {
  it('path segment chargebee, the Authorization header, a webhook-secret key', () => {
    expect(webhook).toMatchObject({ path: 'chargebee', signatureHeader: 'authorization', key: 'webhook-secret' });
  });

  it('accepted: queues the exact body and no header (the Authorization header is the secret)', () => {
    const verdict = webhook.verify(
      { headers: { authorization: basicAuthHeader(secret) }, body: Buffer.from(body) } as never,
      secret,
      Date.now(),
    );
    expect(verdict).toEqual({ ok: true, headers: {}, rawBody: body });
  });

  it('refused: 403 Invalid signature for a wrong, missing or malformed pair', () => {
    for (const authorization of [undefined, 'Basic', basicAuthHeader('refloop:wrong'), `Basic ${'A'.repeat(5000)}`]) {
      const verdict = webhook.verify({ headers: { authorization }, body: Buffer.from(body) } as never, secret, Date.now());
      expect(verdict).toEqual({ ok: false, status: 403, detail: 'Invalid signature.' });
    }
  });
});
