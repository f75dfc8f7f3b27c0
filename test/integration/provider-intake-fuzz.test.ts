// Bad input against the JSON provider intakes (Paddle Billing, Stripe; Chargebee's Basic authentication below), generated with fast-check: bad and
// missing signatures, stale and future timestamps, several signatures in one header, garbage and huge
// bodies, tampered bodies, other accounts. For every answer: never a 5xx, the contract's JSON shape, and
// the status the request alone decides (404 unknown or other-kind account, 403 any signature that does not
// verify, 413 over 128 KiB, 200 only for a body signed with the account's secret within 300 s). Nothing is
// queued for a rejected request; a valid signature over garbage JSON is queued, and the worker acknowledges
// it without effect (a signed body cannot be fixed by a retry).
import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { MAX_WEBHOOK_BYTES } from '../../shared/billing/intake';
import { basicAuthHeader } from '../../shared/providers/chargebee/signature';
import { startChargebeeEmulator } from '../../infra/local/emulators/chargebee';
import { processProviderWebhook } from '../../shared/flows/subscription-sync';
import type { ProviderWebhookMessage } from '../../shared/queue/queues';
import { clearProviderCache, saveProviderConnection, saveProviderSettings } from '../../shared/store/provider';
import { api } from '../support/api';
import { newAccount } from '../support/fixtures';
import { startTestQueues, type TestQueues } from '../support/queues';

let queues: TestQueues;
beforeAll(async () => {
  queues = await startTestQueues();
});
afterAll(async () => {
  await queues?.stop();
});

const NOW = () => Math.floor(Date.now() / 1000);
const hmac = (secret: string, text: string) => createHmac('sha256', secret).update(text, 'utf8').digest('hex');

interface Scheme {
  kind: 'paddle-billing' | 'stripe';
  secret: string;
  header: string;
  path: (account: string) => string;
  /** The header for `body` signed with `secret` at `ts`, with extra (wrong) signatures around the right one. */
  sign: (secret: string, body: string, ts: number, decoys?: string[]) => string;
  connect: (accountId: string, secret: string) => Promise<void>;
}

const SCHEMES: Scheme[] = [
  {
    kind: 'paddle-billing',
    secret: 'pdl_ntfset_fuzz0000000000000001',
    header: 'paddle-signature',
    path: (a) => `/webhooks/paddle-billing/${a}/`,
    sign: (secret, body, ts, decoys = []) => [`ts=${ts}`, ...decoys.map((d) => `h1=${d}`), `h1=${hmac(secret, `${ts}:${body}`)}`].join(';'),
    connect: (accountId, secret) =>
      saveProviderConnection(accountId, {
        kind: 'paddle-billing',
        apiKey: 'pdl_sdbx_apikey_fuzzunused',
        apiUrl: 'http://127.0.0.1:9',
        webhookSecret: secret,
      }),
  },
  {
    kind: 'stripe',
    secret: 'whsec_fuzz000000000000000000001',
    header: 'stripe-signature',
    path: (a) => `/webhooks/stripe/${a}/`,
    sign: (secret, body, ts, decoys = []) => [`t=${ts}`, ...decoys.map((d) => `v1=${d}`), `v1=${hmac(secret, `${ts}.${body}`)}`].join(','),
    connect: (accountId, secret) =>
      saveProviderConnection(accountId, {
        kind: 'stripe',
        secretKey: 'rk_test_fuzzunused000',
        apiUrl: 'http://127.0.0.1:9',
        webhookSecret: secret,
      }),
  },
];

/** A 64-character hex string: what a (wrong) HMAC-SHA256 signature looks like. */
const hex64 = fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 64, maxLength: 64 });

const body = fc.oneof(
  fc.string({ maxLength: 300 }),
  fc.json({ maxDepth: 3 }),
  fc
    .jsonValue({ maxDepth: 2 })
    .map((v) => JSON.stringify({ event_id: 'evt_x', id: 'evt_x', type: 'invoice.paid', event_type: 'transaction.completed', data: v })),
  fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b).toString('latin1')),
);

describe.each(SCHEMES.map((s) => [s.kind, s] as const))('%s intake under generated bad input', (_kind, scheme) => {
  let accountId: string;
  let otherKind: string;
  beforeAll(async () => {
    ({ accountId } = await newAccount());
    await scheme.connect(accountId, scheme.secret);
    ({ accountId: otherKind } = await newAccount());
    await saveProviderSettings(otherKind, {
      vendorId: 1,
      authCode: 'unused',
      publicKey: 'unused',
      vendorsApiUrl: 'http://127.0.0.1:9/api',
      checkoutApiUrl: 'http://127.0.0.1:9/api',
    });
    clearProviderCache();
  });
  beforeEach(() => queues.purge());

  const post = (account: string, raw: string, signature: string | undefined, contentType = 'application/json') =>
    api('POST', scheme.path(account), {
      rawBody: raw,
      headers: { 'content-type': contentType, ...(signature === undefined ? {} : { [scheme.header]: signature }) },
    });

  it('answers 403 to every signature that does not verify (wrong secret, stale, future, tampered, malformed), and queues nothing', async () => {
    const forged = fc.record({
      raw: body,
      mode: fc.constantFrom('wrong-secret', 'stale', 'future', 'tampered', 'garbage', 'missing', 'only-decoys'),
      skew: fc.integer({ min: 301, max: 10_000_000 }),
      decoys: fc.array(hex64, { maxLength: 3 }),
      garbage: fc.string({ maxLength: 200 }),
      contentType: fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', ''),
    });
    await fc.assert(
      fc.asyncProperty(forged, async (f) => {
        const now = NOW();
        const signature =
          f.mode === 'wrong-secret'
            ? scheme.sign(`${scheme.secret}x`, f.raw, now, f.decoys)
            : f.mode === 'stale'
              ? scheme.sign(scheme.secret, f.raw, now - f.skew, f.decoys)
              : f.mode === 'future'
                ? scheme.sign(scheme.secret, f.raw, now + f.skew, f.decoys)
                : f.mode === 'tampered'
                  ? scheme.sign(scheme.secret, `${f.raw} `, now, f.decoys)
                  : f.mode === 'garbage'
                    ? f.garbage
                    : f.mode === 'only-decoys'
                      ? scheme.sign(scheme.secret, f.raw, now, f.decoys).replace(/(h1|v1)=[0-9a-f]{64}$/, `$1=${'0'.repeat(64)}`)
                      : undefined;
        const res = await post(accountId, f.raw, signature, f.contentType);
        expect({ mode: f.mode, status: res.status, body: res.body }).toEqual({
          mode: f.mode,
          status: 403,
          body: { detail: 'Invalid signature.' },
        });
      }),
      { numRuns: 150 },
    );
    expect(await queues.count('provider-events')).toBe(0);
  });

  it('answers 404 for unknown, malformed and other-kind accounts whatever the signature, and 413 over the size limit', async () => {
    const accounts = fc.oneof(
      fc.constant('0123456789abcdef'),
      fc.constant(otherKind),
      fc
        .string({ minLength: 1, maxLength: 40 })
        .filter(
          (s) => !s.includes('/') && !s.includes('?') && !s.includes('#') && s !== '.' && s !== '..' && s.trim() === s && s !== accountId,
        ),
    );
    await fc.assert(
      fc.asyncProperty(accounts, body, async (account, raw) => {
        const res = await post(encodeURIComponent(account), raw, scheme.sign(scheme.secret, raw, NOW()));
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ detail: 'Not found.' });
      }),
      { numRuns: 60 },
    );
    const huge = 'x'.repeat(MAX_WEBHOOK_BYTES + 1);
    const res = await post(accountId, huge, scheme.sign(scheme.secret, huge, NOW()));
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ detail: 'Request body is too large.' });
    expect(await queues.count('provider-events')).toBe(0);
  });

  it('answers 404 in the contract shape to a provider segment no provider has, even for a connected account and a valid signature', async () => {
    const raw = JSON.stringify({ id: 'evt_x' });
    for (const segment of ['nope', 'paddle-classic', 'PADDLE', 'webhooks']) {
      const res = await api('POST', `/webhooks/${segment}/${accountId}/`, {
        rawBody: raw,
        headers: { 'content-type': 'application/json', [scheme.header]: scheme.sign(scheme.secret, raw, NOW()) },
      });
      expect({ segment, status: res.status, body: res.body }).toEqual({ segment, status: 404, body: { detail: 'Not found.' } });
    }
    expect(await queues.count('provider-events')).toBe(0);
  });

  it('queues a validly signed body whatever it holds (several signatures in the header, any JSON or garbage), and the worker acknowledges garbage without effect', async () => {
    await fc.assert(
      fc.asyncProperty(body, fc.array(hex64, { maxLength: 3 }), async (raw, decoys) => {
        const res = await post(accountId, raw, scheme.sign(scheme.secret, raw, NOW() - 200, decoys));
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ received: true });
      }),
      { numRuns: 60 },
    );
    const queued = await queues.receiveAll('provider-events', { waitMs: 500 });
    expect(queued.length).toBeGreaterThanOrEqual(55);
    // The worker never fails on what a provider signed but Refloop cannot read: it acknowledges it.
    for (const m of queued.slice(0, 40)) {
      const message = m.json as ProviderWebhookMessage;
      expect(message).toMatchObject({ kind: 'provider-webhook', provider: scheme.kind, account_id: accountId });
      let thrown: unknown = null;
      try {
        await processProviderWebhook(message);
      } catch (err) {
        thrown = err;
      }
      // The provider's API is unreachable here (port 9): an event that needs a lookup may fail and be
      // retried (that is a 503-like failure, never a parse crash); anything else is acknowledged.
      if (thrown !== null) expect((thrown as Error).name).toBe('ProviderUnavailableError');
    }
  });
});

// Chargebee signs nothing: its webhooks carry `Authorization: Basic base64(<username>:<password>)`, the pair
// the seller typed in its webhook settings (shared/providers/chargebee/signature.ts). Anything but that exact
// pair is a 403 with nothing queued; the pair itself is never queued (only the body is).
describe('chargebee intake under generated bad input (Basic authentication)', () => {
  const USERNAME = 'refloop';
  const PASSWORD = 'fuzz-chargebee-webhook-password-0001';
  const PAIR = `${USERNAME}:${PASSWORD}`;
  const path = (a: string) => `/webhooks/chargebee/${a}/`;
  const envelope = fc
    .record({ id: fc.string({ minLength: 1, maxLength: 30 }).map((s) => `ev_${s}`), content: fc.jsonValue({ maxDepth: 2 }) })
    .map(({ id, content }) =>
      JSON.stringify({
        id,
        occurred_at: NOW(),
        source: 'api',
        object: 'event',
        api_version: 'v2',
        event_type: 'payment_succeeded',
        webhook_status: 'scheduled',
        content,
      }),
    );
  const chargebeeBody = fc.oneof(body, envelope);
  let accountId: string;
  let otherKind: string;
  beforeAll(async () => {
    ({ accountId } = await newAccount());
    await saveProviderConnection(accountId, {
      kind: 'chargebee',
      site: 'fuzz-test',
      apiKey: 'test_fuzzunused0000',
      apiUrl: 'http://127.0.0.1:9',
      webhookUsername: USERNAME,
      webhookPassword: PASSWORD,
    });
    ({ accountId: otherKind } = await newAccount());
    await saveProviderConnection(otherKind, {
      kind: 'stripe',
      secretKey: 'rk_test_fuzzunused000',
      apiUrl: 'http://127.0.0.1:9',
      webhookSecret: 'whsec_fuzz000000000000000000001',
    });
    clearProviderCache();
  });
  beforeEach(() => queues.purge());

  const post = (account: string, raw: string, authorization: string | undefined, contentType = 'application/json') =>
    api('POST', path(account), {
      rawBody: raw,
      headers: { 'content-type': contentType, ...(authorization === undefined ? {} : { authorization }) },
    });

  it('answers 403 to every Authorization that is not the pair (none, wrong password or username, Bearer, malformed base64, oversized), and queues nothing', async () => {
    const printable = fc.string({ minLength: 1, maxLength: 60 }).filter((s) => !s.includes(':'));
    const forged = fc.record({
      raw: chargebeeBody,
      mode: fc.constantFrom(
        'missing',
        'empty',
        'wrong-password',
        'wrong-username',
        'other-pair',
        'bearer',
        'bearer-password',
        'malformed-base64',
        'password-only',
        'oversized',
        'garbage',
      ),
      username: printable,
      password: fc.string({ maxLength: 60 }),
      garbage: fc.string({ maxLength: 200 }),
      pad: fc.integer({ min: 1100, max: 9000 }),
      contentType: fc.constantFrom('application/json', 'text/plain', ''),
    });
    await fc.assert(
      fc.asyncProperty(forged, async (f) => {
        const authorization: Record<typeof f.mode, string | undefined> = {
          missing: undefined,
          empty: '',
          'wrong-password': basicAuthHeader(`${USERNAME}:${f.password === PASSWORD ? `${f.password}x` : f.password}`),
          'wrong-username': basicAuthHeader(`${f.username === USERNAME ? `${f.username}x` : f.username}:${PASSWORD}`),
          'other-pair': basicAuthHeader(`${f.username}x:${f.password}`),
          bearer: `Bearer ${Buffer.from(PAIR).toString('base64')}`,
          'bearer-password': `Bearer ${PASSWORD}`,
          // Characters base64 does not have, in the right pair's encoding.
          'malformed-base64': `Basic ${Buffer.from(PAIR)
            .toString('base64')
            .replace(/^(.{4})/, '$1*!')}`,
          'password-only': basicAuthHeader(PASSWORD),
          oversized: basicAuthHeader(`${PAIR}${'x'.repeat(f.pad)}`),
          garbage: f.garbage === basicAuthHeader(PAIR) ? 'x' : f.garbage,
        };
        const res = await post(accountId, f.raw, authorization[f.mode], f.contentType);
        expect({ mode: f.mode, status: res.status, body: res.body }).toEqual({
          mode: f.mode,
          status: 403,
          body: { detail: 'Invalid signature.' },
        });
      }),
      { numRuns: 150 },
    );
    // The right pair, then padded past the header limit: refused as oversized, not trimmed into a match.
    const raw = JSON.stringify({ id: 'ev_pad', object: 'event' });
    expect((await post(accountId, raw, `${basicAuthHeader(PAIR)}${' '.repeat(1100)}`)).status).toBe(403);
    expect(await queues.count('provider-events')).toBe(0);
  });

  it('answers 404 for unknown, malformed and other-kind accounts with the right pair, and 413 over the size limit', async () => {
    const accounts = fc.oneof(
      fc.constant('0123456789abcdef'),
      fc.constant(otherKind),
      fc
        .string({ minLength: 1, maxLength: 40 })
        .filter(
          (s) => !s.includes('/') && !s.includes('?') && !s.includes('#') && s !== '.' && s !== '..' && s.trim() === s && s !== accountId,
        ),
    );
    await fc.assert(
      fc.asyncProperty(accounts, chargebeeBody, async (account, raw) => {
        const res = await post(encodeURIComponent(account), raw, basicAuthHeader(PAIR));
        expect({ status: res.status, body: res.body }).toEqual({ status: 404, body: { detail: 'Not found.' } });
      }),
      { numRuns: 60 },
    );
    const huge = 'x'.repeat(MAX_WEBHOOK_BYTES + 1);
    const res = await post(accountId, huge, basicAuthHeader(PAIR));
    expect([res.status, res.body]).toEqual([413, { detail: 'Request body is too large.' }]);
    expect(await queues.count('provider-events')).toBe(0);
  });

  it('a forged body with the right pair applies nothing: the worker applies only the event Chargebee answers for its id', async () => {
    const em = await startChargebeeEmulator({ webhookUrl: null });
    try {
      const { accountId: account, apiKey } = await newAccount('unlimited');
      await saveProviderConnection(account, {
        kind: 'chargebee',
        site: em.site,
        apiKey: em.apiKey,
        apiUrl: em.url,
        webhookUsername: em.webhookUsername,
        webhookPassword: em.webhookPassword,
      });
      const pair = basicAuthHeader(`${em.webhookUsername}:${em.webhookPassword}`);
      const call = (method: string, p: string, b?: unknown) => api(method, p, { key: apiKey, ...(b === undefined ? {} : { body: b }) });
      const campaign = await call('POST', '/v1/campaigns/', {
        name: 'forged',
        allows_commission: true,
        commission_amount: '2.00',
        commission_currency: 'USD',
      });
      const member = await call('POST', '/v1/members/', {
        identifier: 'forged-m',
        email: 'forged-m@example.com',
        campaign: { id: campaign.body.id },
      });
      const referral = await call('POST', '/v1/referrals/', { user_identifier: 'forged-user', member_code: member.body.code });
      expect(referral.status).toBe(200);
      // A genuine checkout without a referral, built and not delivered: its events are known to Chargebee.
      const genuine = await em.checkout({ email: 'genuine@example.com', deliver: false });
      const byType = (t: string) => genuine.deliveries.find((d) => d.event.event_type === t) as (typeof genuine.deliveries)[number];
      const paid = JSON.parse(byType('payment_succeeded').rawBody);
      const claim = (body: Record<string, any>) => {
        body.content.customer.cf_refloop_referral_id = referral.body.id;
        body.content.subscription.cf_refloop_referral_id = referral.body.id;
        body.content.invoice.amount_paid = 100_000;
        body.content.invoice.total = 100_000;
        return body;
      };
      const forged = [
        // An id Chargebee does not know.
        claim({ ...structuredClone(paid), id: 'ev_ForgedNotAtChargebee01' }),
        // A known id of another event (the customer's creation), with a payment's body.
        claim({ ...structuredClone(paid), id: byType('customer_created').event.id }),
        // The payment's own id, its body changed (the referral claimed, the amount raised).
        claim(structuredClone(paid)),
      ];
      await queues.purge();
      for (const body of forged) {
        const res = await api('POST', `/webhooks/chargebee/${account}/`, {
          rawBody: JSON.stringify(body),
          headers: { 'content-type': 'application/json', authorization: pair },
        });
        expect([res.status, res.body]).toEqual([200, { received: true }]);
      }
      const queued = await queues.receiveAll('provider-events', { waitMs: 500 });
      expect(queued).toHaveLength(forged.length);
      const fetchesBefore = em.callCounts()['GET /api/v2/events/{id}'] ?? 0;
      for (const m of queued) await processProviderWebhook(m.json as ProviderWebhookMessage);
      // Each was fetched again by its id; only the genuine payment was applied, as Chargebee has it.
      expect((em.callCounts()['GET /api/v2/events/{id}'] ?? 0) - fetchesBefore).toBe(forged.length);
      const after = await call('GET', `/v1/referrals/${referral.body.id}/`);
      expect(after.body).toMatchObject({ is_converted: false, rewards: [], subscription: null });
      const subscription = await call('GET', `/v1/subscriptions/${genuine.subscription.id}/`);
      expect(subscription.status).toBe(200);
      expect(subscription.body).toMatchObject({ id: genuine.subscription.id, unit_price: '10.00', email: 'genuine@example.com' });
      expect(JSON.stringify(subscription.body)).not.toContain(String(referral.body.id));
    } finally {
      await em.stop();
    }
  });

  it('queues a body sent with the right pair (any JSON or garbage) without the Authorization header, and the worker acknowledges garbage', async () => {
    await fc.assert(
      fc.asyncProperty(chargebeeBody, fc.constantFrom('Basic', 'basic', 'BASIC'), async (raw, scheme) => {
        const res = await post(accountId, raw, `${scheme} ${Buffer.from(PAIR).toString('base64')}`);
        expect([res.status, res.body]).toEqual([200, { received: true }]);
      }),
      { numRuns: 60 },
    );
    const queued = await queues.receiveAll('provider-events', { waitMs: 500 });
    expect(queued.length).toBeGreaterThanOrEqual(55);
    for (const m of queued) {
      const message = m.json as ProviderWebhookMessage;
      expect(message).toMatchObject({ kind: 'provider-webhook', provider: 'chargebee', account_id: accountId });
      expect(message.headers).toEqual({});
      expect(JSON.stringify(message)).not.toContain(PASSWORD);
      expect(JSON.stringify(message)).not.toContain(Buffer.from(PAIR).toString('base64'));
    }
    for (const m of queued.slice(0, 30)) {
      let thrown: unknown = null;
      try {
        await processProviderWebhook(m.json as ProviderWebhookMessage);
      } catch (err) {
        thrown = err;
      }
      // The site's API is unreachable here (port 9): an event the worker must fetch again fails as a
      // provider outage and is retried (never a parse crash); anything else is acknowledged.
      if (thrown !== null) expect((thrown as Error).name).toBe('ProviderUnavailableError');
    }
  });
});
