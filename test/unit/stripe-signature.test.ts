// Stripe `Stripe-Signature` (docs/design/providers.md "Signatures"): fixture S1 (stripe-dotnet's EventUtilityTest
// and event_test_signature.json) verbatim, verified with an injected clock; negatives; several v1.
import {
  TOLERANCE_SECONDS,
  computeV1,
  parseSignatureHeader,
  signatureHeader,
  stripeVerifier,
  verifyStripeSignature,
} from '../../shared/providers/stripe/signature';

const verify = (rawBody: string, header: string | undefined, secret: string, nowMs: number) =>
  verifyStripeSignature({ headers: { 'stripe-signature': header }, rawBody }, secret, nowMs);

// S1: 484 bytes, indented with 2 spaces, LF line endings, one trailing LF.
const S1 = {
  secret: 'webhook_secret',
  t: 1533204620,
  header:
    't=1533204620,v1=2220f87ef101a04665f11cdf770523143f875572008577fa0f20882ddb9cc3c7,v0=63f3a72374a733066c4be69ed7f8e5ac85c22c9f0a6a612ab9a025a9e4ee7eef',
  body: `${[
    '{',
    '  "id": "evt_123",',
    '  "object": "event",',
    '  "account": "acct_123",',
    '  "api_version": "2017-05-25",',
    '  "created": 1533204620,',
    '  "data": {',
    '    "object": {',
    '      "id": "cus_123",',
    '      "object": "customer",',
    '      "created": 123456789,',
    '      "email": "test@stripe.com",',
    '      "livemode": false,',
    '      "metadata": {}',
    '    }',
    '  },',
    '  "livemode": false,',
    '  "pending_webhooks": 1,',
    '  "request": {',
    '    "id": "req_123",',
    '    "idempotency_key": "idempotency-key-123"',
    '  },',
    '  "type": "customer.created"',
    '}',
  ].join('\n')}\n`,
  // The dotnet test's fake "now": the event's timestamp + 100 s.
  nowMs: (1533204620 + 100) * 1000,
};

describe('Stripe signature: reference fixture S1', () => {
  it('the body is the 484 bytes of the fixture', () => {
    expect(Buffer.byteLength(S1.body)).toBe(484);
  });

  it('S1 verifies at the fixture clock and yields its event id', () => {
    expect(verify(S1.body, S1.header, S1.secret, S1.nowMs)).toEqual({ ok: true, eventId: 'evt_123' });
  });

  it('computeV1 gives the fixture v1', () => {
    expect(computeV1(S1.secret, S1.t, S1.body)).toBe('2220f87ef101a04665f11cdf770523143f875572008577fa0f20882ddb9cc3c7');
  });

  it('negatives: no trailing LF, a changed byte, a wrong secret, another t', () => {
    expect(verify(S1.body.slice(0, -1), S1.header, S1.secret, S1.nowMs)).toEqual({ ok: false, reason: 'bad_signature' });
    expect(verify(S1.body.replace('test@stripe.com', 'tEst@stripe.com'), S1.header, S1.secret, S1.nowMs)).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
    expect(verify(S1.body, S1.header, 'whsec_other', S1.nowMs)).toEqual({ ok: false, reason: 'bad_signature' });
    expect(verify(S1.body, S1.header.replace('t=1533204620', 't=1533204621'), S1.secret, S1.nowMs)).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
  });

  it('only v1 counts: the fixture v0 alone does not verify', () => {
    const v0Only = 't=1533204620,v0=63f3a72374a733066c4be69ed7f8e5ac85c22c9f0a6a612ab9a025a9e4ee7eef';
    expect(verify(S1.body, v0Only, S1.secret, S1.nowMs)).toEqual({ ok: false, reason: 'bad_signature' });
    // Nor does a v0 carrying the real v1 value (the scheme name is part of the check).
    const v0Disguised = 't=1533204620,v0=2220f87ef101a04665f11cdf770523143f875572008577fa0f20882ddb9cc3c7';
    expect(verify(S1.body, v0Disguised, S1.secret, S1.nowMs)).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('without an injected clock near its t, the fixture is stale (as the SDK says without receivedAt)', () => {
    expect(verify(S1.body, S1.header, S1.secret, Date.UTC(2026, 0, 1))).toEqual({ ok: false, reason: 'stale_timestamp' });
  });
});

describe('Stripe signature: 300 s tolerance, both ways, injected clock', () => {
  it.each([
    ['exactly t', 0, true],
    ['+100 s (the fixture test)', 100_000, true],
    ['+300 s', 300_000, true],
    ['+300.001 s', 300_001, false],
    ['+1 day', 86_400_000, false],
    ['-300 s (t in the future)', -300_000, true],
    ['-301 s (t in the future)', -301_000, false],
  ])('%s', (_label, offsetMs, ok) => {
    const result = verify(S1.body, S1.header, S1.secret, S1.t * 1000 + offsetMs);
    expect(result.ok).toBe(ok);
    if (!ok) expect(result).toEqual({ ok: false, reason: 'stale_timestamp' });
  });

  it('TOLERANCE_SECONDS is 300', () => expect(TOLERANCE_SECONDS).toBe(300));
});

describe('Stripe signature: several v1 (a secret being rolled)', () => {
  const secret = 'whsec_new';
  const body = '{"id":"evt_1","object":"event","type":"invoice.paid","data":{"object":{}}}';
  const now = 1_700_000_000;
  const good = computeV1(secret, now, body);
  const old = computeV1('whsec_old', now, body);

  it('any matching v1 is enough, in any position', () => {
    expect(verify(body, `t=${now},v1=${old},v1=${good}`, secret, now * 1000)).toEqual({ ok: true, eventId: 'evt_1' });
    expect(verify(body, `t=${now},v1=${good},v1=${old},v0=${old}`, secret, now * 1000).ok).toBe(true);
  });

  it('none matching fails', () => {
    expect(verify(body, `t=${now},v1=${old},v1=${old}`, secret, now * 1000)).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('upper-case hex and spaces after commas are accepted', () => {
    expect(verify(body, `t=${now}, v1=${good.toUpperCase()}`, secret, now * 1000).ok).toBe(true);
  });

  it('signatureHeader signs as Stripe does; the verifier object is the stripe kind', () => {
    expect(verify(body, signatureHeader(secret, body, now), secret, now * 1000)).toEqual({ ok: true, eventId: 'evt_1' });
    expect(stripeVerifier.kind).toBe('stripe');
    expect(
      stripeVerifier.verify({ headers: { 'stripe-signature': signatureHeader(secret, body, now) }, rawBody: body }, secret, now * 1000).ok,
    ).toBe(true);
  });

  it('a verified body that is not an event object: ok, event id null', () => {
    expect(
      verify('{"id":"cus_1","object":"customer"}', signatureHeader(secret, '{"id":"cus_1","object":"customer"}', now), secret, now * 1000),
    ).toEqual({ ok: true, eventId: null });
    expect(verify('not json', signatureHeader(secret, 'not json', now), secret, now * 1000)).toEqual({ ok: true, eventId: null });
  });
});

describe('Stripe signature: missing and malformed headers', () => {
  const secret = 'whsec_test';
  const body = '{}';
  const now = 1_700_000_000;
  const v1 = computeV1(secret, now, body);

  it('no header, or an empty one: missing_signature', () => {
    expect(verify(body, undefined, secret, now * 1000)).toEqual({ ok: false, reason: 'missing_signature' });
    expect(verify(body, ' ', secret, now * 1000)).toEqual({ ok: false, reason: 'missing_signature' });
  });

  it.each([
    ['no t', `v1=${v1}`],
    ['no v1', `t=${now}`],
    ['two t', `t=${now},t=${now},v1=${v1}`],
    ['non-numeric t', `t=abc,v1=${v1}`],
    ['negative t', `t=-${now},v1=${v1}`],
    ['fractional t', `t=${now}.5,v1=${v1}`],
    ['v1 too short', `t=${now},v1=${v1.slice(1)}`],
    ['v1 not hex', `t=${now},v1=${'z'.repeat(64)}`],
    ['semicolon separated (Paddle style)', `ts=${now};h1=${v1}`],
    ['a part without =', `t=${now},v1=${v1},junk`],
    ['empty part', `t=${now},,v1=${v1}`],
    ['huge header', `t=${now},v1=${v1},x=${'a'.repeat(4000)}`],
    ['too many v1', `t=${now},${Array(9).fill(`v1=${v1}`).join(',')}`],
  ])('%s: bad_signature', (_label, header) => {
    expect(verify(body, header, secret, now * 1000)).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('an empty secret never verifies (HMAC with an empty key is computable by anyone)', () => {
    expect(verify(body, signatureHeader('', body, now), '', now * 1000)).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('parseSignatureHeader keeps the t digits as sent and skips other schemes', () => {
    expect(parseSignatureHeader(`t=0017,v1=${v1},v0=${v1},v2=x`)).toEqual({ t: '0017', v1: [v1] });
  });

  it('never throws on arbitrary input', () => {
    for (const header of ['=', ',', 't=', 'v1=', '\u0000', `t=1,v1=${'f'.repeat(64)},=`]) {
      expect(() => verify(body, header, secret, now * 1000)).not.toThrow();
    }
  });
});
