// "Why did this referral not convert?" (issue 23 #12), for every payment provider against its emulator: a
// checkout that does not attribute is recorded by the subscription-sync worker with why, found by the
// referred user's email (without case) or by the referral its checkout named, through
// GET /v1/referrals/{id}/diagnosis/; a replayed event records nothing twice; the conversion endpoint then
// converts it and the diagnosis no longer lists it. docs/referrals-diagnosis.md.
import type { Pollers } from '../../infra/local/pollers';
import { api } from '../support/api';
import { newAccount, pollUntil } from '../support/fixtures';
import { deliver, PROVIDER_HARNESSES, type Delivery, type ProviderHarness } from '../support/provider-harness';
import { startTestPollers, startTestQueues, type TestQueues } from '../support/queues';
import { queryAll } from '../../shared/store/ops';
import { recordDynamoCalls } from '../../shared/store/instrumentation';
import { emailKeyPart, unattributedKeys } from '../../shared/store/unattributed';
import { saveSubscription } from '../../shared/store/subscriptions';
import { attributeFromHints } from '../../shared/flows/attribution';

let queues: TestQueues;
let pollers: Pollers;

beforeAll(async () => {
  queues = await startTestQueues();
  pollers = startTestPollers(queues);
});

afterAll(async () => {
  await pollers?.stop();
  await queues?.stop();
});

interface Entry {
  subscription_id: string | number;
  checkout_id: string | null;
  email: string;
  reason: string;
  detail: string;
  referral_named: string | null;
  assigned_referral_id: string | null;
  status: string | null;
  first_seen_at: number;
  last_seen_at: number;
}
interface Diagnosis {
  referral_id: string;
  user_identifier: string;
  is_converted: boolean;
  subscription_id: string | number | null;
  email: string | null;
  email_source: string | null;
  unattributed: Entry[];
}

describe.each(PROVIDER_HARNESSES.map((h) => [h.kind, h] as const))('%s', (kind, provider: ProviderHarness) => {
  beforeAll(() => provider.start());
  afterAll(() => provider.stop());

  let accountId: string;
  let key: string;
  let memberCode: string;
  let serial = 0;
  const json = (method: string, path: string, body?: unknown) => api(method, path, { key, ...(body === undefined ? {} : { body }) });
  const send = async (deliveries: Delivery[]) => {
    for (const d of deliveries) expect((await deliver(accountId, d)).status).toBe(200);
  };
  const diagnosis = async (referralId: string, query = ''): Promise<Diagnosis> => {
    const res = await json('GET', `/v1/referrals/${referralId}/diagnosis/${query}`);
    expect(res.status).toBe(200);
    return res.body as Diagnosis;
  };
  const queuesIdle = () => pollUntil(async () => ((await queues.count('provider-events')) === 0 ? true : null), { timeoutMs: 20_000 });
  const newReferral = async (userIdentifier: string) => {
    const res = await json('POST', '/v1/referrals/', { user_identifier: userIdentifier, member_code: memberCode });
    expect(res.status).toBe(200);
    return res.body.id as string;
  };

  beforeAll(async () => {
    ({ accountId, apiKey: key } = await newAccount('unlimited'));
    await provider.connect(accountId);
    const campaign = await json('POST', '/v1/campaigns/', {
      name: `diagnosis-${kind}`,
      allows_commission: true,
      commission_amount: '2.00',
      commission_currency: 'USD',
    });
    expect(campaign.status).toBe(201);
    const member = await json('POST', '/v1/members/', {
      identifier: `referrer-${kind}`,
      email: `referrer-${kind}@example.com`,
      campaign: { id: campaign.body.id },
    });
    expect(member.status).toBe(201);
    memberCode = member.body.code as string;
  });

  it("a checkout without the referral is listed under the referred user's email (any case) with why, once however often it is replayed; converting it by subscription empties the list", async () => {
    const n = ++serial;
    const email = `jane-${kind}-${n}@example.com`;
    const referralId = await newReferral(email);
    // Before anything was seen: an empty diagnosis, the email taken from the user_identifier.
    expect(await diagnosis(referralId)).toEqual({
      referral_id: referralId,
      user_identifier: email,
      is_converted: false,
      subscription_id: null,
      email,
      email_source: 'user_identifier',
      unattributed: [],
    });

    // The app forgot the referral at checkout; the customer typed their address in another case.
    const out = await provider.checkout(`Jane-${kind}-${n}@Example.COM`);
    await send(out.deliveries);
    const seen = await pollUntil(
      async () => {
        const d = await diagnosis(referralId);
        return d.unattributed.length === 1 ? d : null;
      },
      { timeoutMs: 20_000 },
    );
    expect(seen.unattributed[0]).toMatchObject({
      subscription_id: out.subscriptionId,
      email: `Jane-${kind}-${n}@Example.COM`,
      reason: 'no_referral_hint',
      detail: expect.stringContaining('no refloop_referral_id'),
      referral_named: null,
      assigned_referral_id: null,
      status: 'active',
    });
    const first = seen.unattributed[0] as Entry;
    expect(first.first_seen_at).toBeGreaterThan(Date.now() / 1000 - 300);

    // Every webhook again, in reverse: the same single item (idempotent), the same reason.
    await send([...out.deliveries].reverse());
    await queuesIdle();
    const again = await diagnosis(referralId);
    expect(again.unattributed.map((e) => [e.subscription_id, e.reason])).toEqual([[out.subscriptionId, 'no_referral_hint']]);
    expect(again.unattributed[0]?.first_seen_at).toBe(first.first_seen_at);
    const stored = await queryAll({ partitionValue: unattributedKeys.byEmail(accountId, emailKeyPart(email) as string) });
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ type: 'Unattributed', expires_at: expect.any(Number) });
    expect(Number(stored[0]?.expires_at)).toBeGreaterThan(Date.now() / 1000 + 89 * 86_400);

    // "Convert with subscription…": the existing conversion endpoint; the subscription leaves the list.
    const convert = await json('POST', `/v1/referrals/${referralId}/conversion/`, { subscription_id: out.subscriptionId });
    expect(convert.status).toBe(200);
    expect(await diagnosis(referralId)).toMatchObject({ is_converted: true, subscription_id: out.subscriptionId, unattributed: [] });
    // Asked from another referral by that email: the subscription is now assigned to the first one.
    const elsewhere = await diagnosis(await newReferral(`someone-${kind}-${n}`), `?email=${encodeURIComponent(email)}`);
    expect(elsewhere.unattributed).toMatchObject([
      { subscription_id: out.subscriptionId, reason: 'subscription_assigned', assigned_referral_id: referralId },
    ]);
  });

  it('a checkout naming a referral that is converted already is listed under that referral with why, even when the email differs; a user_identifier that is not an email needs ?email=', async () => {
    const n = ++serial;
    const referralId = await newReferral(`first-${kind}-${n}@example.com`);
    const converted = await provider.checkout(`first-${kind}-${n}@example.com`, referralId);
    await send(converted.deliveries);
    await pollUntil(async () => ((await json('GET', `/v1/referrals/${referralId}/`)).body.is_converted ? true : null), {
      timeoutMs: 20_000,
    });
    await queuesIdle();

    // A second checkout of another person carries the same (stale) referral id.
    const stale = await provider.checkout(`other-${kind}-${n}@example.com`, referralId);
    await send(stale.deliveries);
    const named = await pollUntil(
      async () => {
        const d = await diagnosis(referralId);
        return d.unattributed.length === 1 && d.unattributed[0]?.reason === 'referral_converted_elsewhere' ? d : null;
      },
      { timeoutMs: 20_000 },
    );
    expect(named.unattributed[0]).toMatchObject({
      subscription_id: stale.subscriptionId,
      email: `other-${kind}-${n}@example.com`,
      referral_named: referralId,
      detail: expect.stringContaining('already converted with another subscription'),
    });

    // A referral whose user_identifier is not an email: nothing is looked up by email until one is given.
    const plain = await newReferral(`user-${kind}-${n}`);
    expect(await diagnosis(plain)).toMatchObject({ email: null, email_source: null, unattributed: [] });
    const byEmail = await diagnosis(plain, `?email=${encodeURIComponent(`OTHER-${kind}-${n}@example.com`)}`);
    expect(byEmail).toMatchObject({ email: `OTHER-${kind}-${n}@example.com`, email_source: 'query' });
    expect(byEmail.unattributed.map((e) => [e.subscription_id, e.reason, e.referral_named])).toEqual([
      [stale.subscriptionId, 'referral_converted_elsewhere', referralId],
    ]);
    // The first buyer's subscription attributed by itself: it was never an unattributed sighting.
    const other = await diagnosis(plain, `?email=${encodeURIComponent(`first-${kind}-${n}@example.com`)}`);
    expect(other.unattributed).toEqual([]);
  });

  it('answers 404 for an unknown or malformed id, and 400 naming an unknown query parameter or a bad email', async () => {
    const unknown = await json('GET', `/v1/referrals/${'f'.repeat(32)}/diagnosis/`);
    expect({ status: unknown.status, body: unknown.body }).toEqual({ status: 404, body: { detail: 'Not found.' } });
    expect((await json('GET', '/v1/referrals/not-an-id/diagnosis/')).status).toBe(404);
    const referralId = await newReferral(`bad-input-${kind}@example.com`);
    const extra = await json('GET', `/v1/referrals/${referralId}/diagnosis/?mail=x@example.com`);
    expect(extra.status).toBe(400);
    expect(Object.keys(extra.body as object)).toEqual(['mail']);
    const bad = await json('GET', `/v1/referrals/${referralId}/diagnosis/?email=not-an-email`);
    expect({ status: bad.status, body: bad.body }).toEqual({ status: 400, body: { email: ['Enter a valid email address.'] } });
  });
});

describe('every reason the attribution records (attributeFromHints, as the subscription-sync worker calls it)', () => {
  let accountId: string;
  let key: string;
  let memberCode: string;
  let memberEmail: string;
  let ids = 91_000_000;
  const json = (method: string, path: string, body?: unknown) => api(method, path, { key, ...(body === undefined ? {} : { body }) });
  const subscription = (email: string) =>
    saveSubscription(accountId, {
      id: ++ids,
      unit_price: '10.00',
      currency: 'USD',
      status: 'active',
      email,
      next_bill_date: '2031-07-01',
      last_bill_date: null,
      plan: {
        id: 9001,
        name: 'Pro monthly',
        amount: '10.00',
        currency: 'USD',
        interval: 'month',
        frequency: 1,
        descriptor: '$10.00 / month',
      },
    });
  const newReferral = async (user: string) => {
    const res = await json('POST', '/v1/referrals/', { user_identifier: user, member_code: memberCode });
    expect(res.status).toBe(200);
    return res.body.id as string;
  };
  const reasonsOf = async (referralId: string, email?: string) =>
    (
      (await json('GET', `/v1/referrals/${referralId}/diagnosis/${email ? `?email=${encodeURIComponent(email)}` : ''}`)).body as Diagnosis
    ).unattributed.map((e) => ({ id: e.subscription_id, reason: e.reason, named: e.referral_named }));

  beforeAll(async () => {
    ({ accountId, apiKey: key } = await newAccount('unlimited'));
    const campaign = await json('POST', '/v1/campaigns/', {
      name: 'reasons',
      allows_commission: true,
      commission_amount: '2.00',
      commission_currency: 'USD',
    });
    memberEmail = `referrer-${Date.now()}@example.com`;
    const member = await json('POST', '/v1/members/', {
      identifier: `reasons-${Date.now()}`,
      email: memberEmail,
      campaign: { id: campaign.body.id },
    });
    expect(member.status).toBe(201);
    memberCode = member.body.code as string;
  });

  it('unknown coupon, malformed and unknown referral ids, self-referral; a later event without hints keeps the specific reason; a conversion forgets the sighting', async () => {
    const email = `reasons-${Date.now()}@example.com`;
    const referralId = await newReferral(email);

    const coupon = await subscription(email);
    expect(await attributeFromHints(accountId, 'evt_c1', { couponCode: 'NOTACOUPON1' }, coupon)).toBe('none');
    const malformed = await subscription(email);
    expect(await attributeFromHints(accountId, 'evt_m1', { referralId: 'not-a-referral' }, malformed)).toBe('ignored');
    const unknown = await subscription(email);
    const ghost = 'f'.repeat(32);
    expect(await attributeFromHints(accountId, 'evt_u1', { referralId: ghost }, unknown)).toBe('ignored');
    // A renewal of the malformed one names nothing: its specific reason stays.
    expect(await attributeFromHints(accountId, 'evt_m2', {}, malformed)).toBe('none');

    expect(new Map((await reasonsOf(referralId)).map((r) => [r.id, r]))).toEqual(
      new Map([
        [coupon.id, { id: coupon.id, reason: 'unknown_coupon', named: null }],
        [malformed.id, { id: malformed.id, reason: 'malformed_referral_id', named: 'not-a-referral' }],
        [unknown.id, { id: unknown.id, reason: 'referral_not_found', named: ghost }],
      ]),
    );

    // The referring member's own email: refused as a self-referral, listed under the referral it named.
    const own = await subscription(memberEmail.toUpperCase());
    expect(await attributeFromHints(accountId, 'evt_s1', { referralId }, own)).toBe('ignored');
    expect((await reasonsOf(referralId)).find((r) => r.id === own.id)).toEqual({ id: own.id, reason: 'self_referral', named: referralId });

    // The coupon one is converted by its referral id at last: its sighting is forgotten, by a Delete in the
    // conversion's own transaction (no DeleteItem call of its own).
    const deletes = recordDynamoCalls({ filter: (c) => c.command === 'DeleteItem' });
    try {
      expect(await attributeFromHints(accountId, 'evt_c2', { referralId }, coupon)).toBe('converted');
      expect(deletes.calls).toHaveLength(0);
      expect((await reasonsOf(referralId)).map((r) => r.id)).not.toContain(coupon.id);
      // The same event again (the copy it had was read before the conversion): already converted, so no
      // transaction ran, and the sighting is forgotten on its own.
      expect(await attributeFromHints(accountId, 'evt_c2', { referralId }, coupon)).toBe('unchanged');
      expect(deletes.calls).toHaveLength(1);
    } finally {
      deletes.stop();
    }
    expect(await queryAll({ partitionValue: unattributedKeys.byEmail(accountId, emailKeyPart(email) as string) })).toHaveLength(2);
  });
});
