// Paddle Billing `Paddle-Signature` (docs/design/providers.md "Signatures"): fixtures P1 (official Node SDK tests)
// and P2 (official Go SDK tests, a real-format event) verbatim, verified with an injected clock.
import {
  TOLERANCE_SECONDS,
  computeH1,
  paddleBillingVerifier,
  parseSignatureHeader,
  signatureHeader,
  verifyPaddleBillingSignature,
} from '../../shared/providers/paddle-billing/signature';

const verify = (rawBody: string, header: string | undefined, secret: string, nowMs: number) =>
  verifyPaddleBillingSignature({ headers: { 'paddle-signature': header }, rawBody }, secret, nowMs);

// P1: the SDK's tests freeze the clock at 2023-11-01T00:00:00Z = the fixture's ts.
const P1 = {
  body: '{"data": ["1", "2"]}',
  secret: 'VALID_SECRET',
  header: 'ts=1698796800;h1=a300428748dce5c70e4da19bffd60769591ea969c99dea3105d0ec9612cf43f9',
  nowMs: Date.UTC(2023, 10, 1, 0, 0, 0),
  multiBody: '{"data": "value"}',
  multiHeader:
    'ts=1698796800;h1=28981e941fae76e53db32f3d2a83cb69db41476595e84e1970a1b5d98f62b261;h1=28981e941fae76e53db32f3d2a83cb69db41476595e84e1970a1b5d98f62b261;h2=RANDOM_HASH',
};

// P2: one line, 575 bytes, no trailing newline.
const P2 = {
  secret: 'pdl_ntfset_01hsdn8d43dt7mezr1ef2jtbaw_hKkRiCGyyRhbFwIUuqiTBgI7gnWoV0Gr',
  header: 'ts=1710929255;h1=6c05ef8fa83c44d751be6d259ec955ce5638e2c54095bf128e408e2fce1589c8',
  body: '{"data":{"id":"pri_01hsdn96k2hxjzsq5yerecdj9j","name":null,"status":"active","quantity":{"maximum":999999,"minimum":1},"tax_mode":"account_setting","product_id":"pro_01hsdn8qp7yydry3x1yeg6a9rv","unit_price":{"amount":"1000","currency_code":"USD"},"custom_data":null,"description":"testing","import_meta":null,"trial_period":null,"billing_cycle":{"interval":"month","frequency":1},"unit_price_overrides":[]},"event_id":"evt_01hsdn97563968dy0szkmgjwh3","event_type":"price.created","occurred_at":"2024-03-20T10:07:35.590857Z","notification_id":"ntf_01hsdn977e920kbgzt6r6c9rqc"}',
  nowMs: 1710929255_000 + 2_000,
};

describe('Paddle Billing signature: reference fixtures', () => {
  it('P1 verifies at the frozen clock', () => {
    expect(verify(P1.body, P1.header, P1.secret, P1.nowMs)).toEqual({ ok: true, eventId: null });
  });

  it('P2 (575-byte real event) verifies and yields its event id', () => {
    expect(Buffer.byteLength(P2.body)).toBe(575);
    expect(verify(P2.body, P2.header, P2.secret, P2.nowMs)).toEqual({ ok: true, eventId: 'evt_01hsdn97563968dy0szkmgjwh3' });
  });

  it('P1 negatives: reformatted body, wrong secret, other ts', () => {
    expect(verify('{ "data": [ "1", "2" ]}', P1.header, P1.secret, P1.nowMs)).toEqual({ ok: false, reason: 'bad_signature' });
    expect(verify(P1.body, P1.header, 'INVALID_VALID_SECRET', P1.nowMs)).toEqual({ ok: false, reason: 'bad_signature' });
    const otherTs = P1.header.replace('ts=1698796800', 'ts=9876');
    expect(verify(P1.body, otherTs, P1.secret, P1.nowMs)).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('P2 negatives: a trailing newline or one changed byte breaks it', () => {
    expect(verify(`${P2.body}\n`, P2.header, P2.secret, P2.nowMs).ok).toBe(false);
    expect(verify(P2.body.replace('"1000"', '"1001"'), P2.header, P2.secret, P2.nowMs).ok).toBe(false);
  });

  it('P1 multi: duplicated h1 plus an unknown h2 key is valid', () => {
    expect(verify(P1.multiBody, P1.multiHeader, P1.secret, P1.nowMs).ok).toBe(true);
  });

  it('SDK 5 s window is not applied: 6 s after ts (SDK says false) is valid here', () => {
    expect(verify(P1.body, P1.header, P1.secret, P1.nowMs + 6_000).ok).toBe(true);
  });
});

describe('Paddle Billing signature: 300 s tolerance, both ways, injected clock', () => {
  const ts = 1698796800;
  it.each([
    ['exactly ts', 0, true],
    ['+299 s', 299_000, true],
    ['+300 s', 300_000, true],
    ['+300.001 s', 300_001, false],
    ['+1 day', 86_400_000, false],
    ['-300 s (ts in the future)', -300_000, true],
    ['-301 s (ts in the future)', -301_000, false],
  ])('%s', (_label, offsetMs, ok) => {
    const result = verify(P1.body, P1.header, P1.secret, ts * 1000 + offsetMs);
    expect(result.ok).toBe(ok);
    if (!ok) expect(result).toEqual({ ok: false, reason: 'stale_timestamp' });
  });

  it('TOLERANCE_SECONDS is 300', () => expect(TOLERANCE_SECONDS).toBe(300));
});

describe('Paddle Billing signature: several h1', () => {
  const secret = 'pdl_ntfset_test';
  const body = '{"event_id":"evt_1","event_type":"subscription.created","data":{}}';
  const now = 1_700_000_000;
  const good = computeH1(secret, now, body);
  const wrong = computeH1('old-secret', now, body);

  it('any matching h1 is enough, in any position', () => {
    expect(verify(body, `ts=${now};h1=${wrong};h1=${good}`, secret, now * 1000).ok).toBe(true);
    expect(verify(body, `ts=${now};h1=${good};h1=${wrong}`, secret, now * 1000).ok).toBe(true);
  });

  it('none matching fails', () => {
    expect(verify(body, `ts=${now};h1=${wrong};h1=${wrong}`, secret, now * 1000)).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('upper-case hex is accepted (hex is case-insensitive)', () => {
    expect(verify(body, `ts=${now};h1=${good.toUpperCase()}`, secret, now * 1000).ok).toBe(true);
  });

  it('signatureHeader signs as Paddle does, and the event id comes back', () => {
    expect(verify(body, signatureHeader(secret, body, now), secret, now * 1000)).toEqual({ ok: true, eventId: 'evt_1' });
    expect(paddleBillingVerifier.kind).toBe('paddle-billing');
    expect(
      paddleBillingVerifier.verify(
        { headers: { 'paddle-signature': signatureHeader(secret, body, now) }, rawBody: body },
        secret,
        now * 1000,
      ).ok,
    ).toBe(true);
  });
});

describe('Paddle Billing signature: missing and malformed headers', () => {
  const secret = 'pdl_ntfset_test';
  const body = '{}';
  const now = 1_700_000_000;
  const h1 = computeH1(secret, now, body);

  it('no header, or an empty one: missing_signature', () => {
    expect(verify(body, undefined, secret, now * 1000)).toEqual({ ok: false, reason: 'missing_signature' });
    expect(verify(body, '  ', secret, now * 1000)).toEqual({ ok: false, reason: 'missing_signature' });
  });

  it.each([
    ['no ts', `h1=${h1}`],
    ['no h1', `ts=${now}`],
    ['two ts', `ts=${now};ts=${now};h1=${h1}`],
    ['non-numeric ts', `ts=abc;h1=${h1}`],
    ['negative ts', `ts=-${now};h1=${h1}`],
    ['fractional ts', `ts=${now}.5;h1=${h1}`],
    ['h1 too short', `ts=${now};h1=${h1.slice(1)}`],
    ['h1 not hex', `ts=${now};h1=${'z'.repeat(64)}`],
    ['comma separated (Stripe style)', `t=${now},v1=${h1}`],
    ['a part without =', `ts=${now};h1=${h1};junk`],
    ['empty part', `ts=${now};;h1=${h1}`],
    ['huge header', `ts=${now};h1=${h1};x=${'a'.repeat(2000)}`],
    ['too many h1', `ts=${now};${Array(9).fill(`h1=${h1}`).join(';')}`],
  ])('%s: bad_signature', (_label, header) => {
    expect(verify(body, header, secret, now * 1000)).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('an empty secret never verifies (HMAC with an empty key is computable by anyone)', () => {
    expect(verify(body, signatureHeader('', body, now), '', now * 1000)).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('parseSignatureHeader keeps the ts digits as sent and skips unknown keys', () => {
    expect(parseSignatureHeader(`ts=0017;h1=${h1};h2=x`)).toEqual({ ts: '0017', h1: [h1] });
  });

  it('never throws on arbitrary input', () => {
    for (const header of ['=', ';', 'ts=', 'h1=', '\u0000', `ts=1;h1=${'f'.repeat(64)};=`]) {
      expect(() => verify(body, header, secret, now * 1000)).not.toThrow();
    }
  });
});
