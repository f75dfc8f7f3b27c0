// Self-referral beyond email (docs/fraud.md "Self-referral beyond email") on real parts, for every payment
// provider against its emulator: signed webhooks through the intake, the workers behind pollers, the
// adapter calling the emulator's API. A member whose own subscription is paid by payer X (the same provider
// customer: Stripe `cus_…`, Paddle Billing `ctm_…`, Paddle Classic's user, found by the checkout's email,
// which is not the member's; at Stripe also its saved card) refers a user whose checkout is paid by X too:
// - the default `hold`: converted all the same, the referral's fraud_flags say so in words, its fraud_hold
//   names the flag, the flag is in the review queue, the commission is held;
// - a different payer: a clean conversion; the action `off`: a clean conversion; `flag`: flagged, not held.
// Stripe also compares card fingerprints: the same card number under another customer, at an automatic
// conversion (in its transaction), at a conversion through the API (the fraud screening of its event), and
// a card the referred subscription switches to after its conversion (the screening, queued by the sync).
import type { Pollers } from '../../infra/local/pollers';
import { startStripeEmulator, type StripeEmulator } from '../../infra/local/emulators/stripe';
import { getItem } from '../../shared/store/ops';
import { saveProviderConnection } from '../../shared/store/provider';
import { applyProviderUpdate, getSubscription, subscriptionPayerIds } from '../../shared/store/subscriptions';
import { memberPayerIds } from '../../shared/store/members';
import { followPayers } from '../../shared/flows/payer-ids';
import { keys } from '../../shared/store/table';
import { api } from '../support/api';
import { newAccount, pollUntil } from '../support/fixtures';
import { deliver, PROVIDER_HARNESSES, type Delivery, type ProviderHarness } from '../support/provider-harness';
import { startTestPollers, startTestQueues, type TestQueues } from '../support/queues';

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

interface ReferralBody {
  is_converted: boolean;
  fraud_flags: { rule: string; at: number; detail: string }[];
  rewards: { id: string; type: string; status?: string }[];
}

/** One account connected to a provider, with a commission campaign. */
function account(connect: (accountId: string) => Promise<void>) {
  const state = { accountId: '', key: '', campaignId: '', serial: 0 };
  const json = (method: string, path: string, body?: unknown) =>
    api(method, path, { key: state.key, ...(body === undefined ? {} : { body }) });
  const send = async (deliveries: Delivery[]) => {
    for (const d of deliveries) expect((await deliver(state.accountId, d)).status).toBe(200);
  };
  const setup = async () => {
    const a = await newAccount('unlimited');
    state.accountId = a.accountId;
    state.key = a.apiKey;
    await connect(a.accountId);
    const c = await json('POST', '/v1/campaigns/', {
      name: 'payer',
      allows_commission: true,
      commission_amount: '2.00',
      commission_currency: 'USD',
    });
    expect(c.status).toBe(201);
    state.campaignId = c.body.id;
  };
  /** A member whose own subscription is `subscriptionId` (stored, with its payer ids), under another email. */
  const member = async (subscriptionId: string | number) => {
    await pollUntil(async () => {
      const s = await getSubscription(state.accountId, subscriptionId);
      return s && subscriptionPayerIds(s).length > 0 ? true : null;
    });
    const n = ++state.serial;
    const m = await json('POST', '/v1/members/', {
      identifier: `payer-m-${n}`,
      email: `payer-member-${n}@member.example.com`,
      campaign: { id: state.campaignId },
      subscription: { id: subscriptionId },
    });
    expect(m.status).toBe(201);
    return m.body as { id: string; code: string };
  };
  const referral = async (code: string) => {
    const r = await json('POST', '/v1/referrals/', { user_identifier: `payer-u-${++state.serial}`, member_code: code });
    expect(r.status).toBe(200);
    return r.body.id as string;
  };
  const get = async (id: string) => (await json('GET', `/v1/referrals/${id}/`)).body as ReferralBody;
  /** The referral once converted with its commission created. */
  const converted = (id: string) =>
    pollUntil(
      async () => {
        const r = await get(id);
        return r.is_converted && r.rewards.length > 0 ? r : null;
      },
      { timeoutMs: 15_000 },
    );
  // What earlier checkouts queued is screened under the action it was made with.
  const action = async (value: 'off' | 'flag' | 'hold') => {
    await queues.drained(['provider-events', 'rewards', 'webhook-events', 'fraud']);
    expect((await json('PATCH', '/v1/fraud-rules/', { self_referral: { action: value } })).status).toBe(200);
  };
  const fraudHold = async (id: string) => (await getItem(keys.referral(state.accountId, id)))?.fraud_hold;
  const flags = async (memberId: string) =>
    (await json('GET', `/v1/fraud-flags/?rule=self_referral&member=${memberId}`)).body as {
      count: number;
      results: { id: string; subject_id: string; action: string; detail: string }[];
    };
  return { state, json, send, setup, member, referral, get, converted, action, fraudHold, flags };
}

const selfReferral = (detail: RegExp) => [{ rule: 'self_referral', at: expect.any(Number), detail: expect.stringMatching(detail) }];

describe.each(PROVIDER_HARNESSES.map((h) => [h.kind, h] as const))('%s: the same customer', (kind, provider: ProviderHarness) => {
  const t = account((accountId) => provider.connect(accountId));
  beforeAll(async () => {
    await provider.start();
    await t.setup();
  });
  afterAll(() => provider.stop());

  it('hold by default, clean for another payer, clean when off, flagged and not held when flag', async () => {
    const payer = `payer-${kind}@pay.example.com`;
    // Stripe's same customer pays with its saved card: the card is the stronger match, named first.
    const words = kind === 'stripe' ? /same card at Stripe/ : /same customer account/;
    const own = await provider.checkout(payer);
    await t.send(own.deliveries);
    const m = await t.member(own.subscriptionId);

    // The same payer (hold, the default): converted, flagged in words, held.
    const held = await t.referral(m.code);
    await t.send((await provider.checkout(payer, held)).deliveries);
    const heldBody = await t.converted(held);
    expect(heldBody.fraud_flags).toEqual(selfReferral(words));
    const flagId = await t.fraudHold(held);
    expect(flagId).toMatch(/^ff_/);
    expect(heldBody.rewards.map((r) => r.status)).toEqual(['held']);
    const queued = await t.flags(m.id);
    expect(queued.results).toEqual([expect.objectContaining({ id: flagId, subject_id: held, action: 'hold' })]);

    // Another payer: clean.
    const other = await t.referral(m.code);
    await t.send((await provider.checkout(`someone-else-${kind}@pay.example.com`, other)).deliveries);
    const otherBody = await t.converted(other);
    expect(otherBody.fraud_flags).toEqual([]);
    expect(otherBody.rewards.map((r) => r.status)).toEqual(['pending']);

    // Off: the same payer converts as any other.
    await t.action('off');
    const off = await t.referral(m.code);
    await t.send((await provider.checkout(payer, off)).deliveries);
    const offBody = await t.converted(off);
    expect(offBody.fraud_flags).toEqual([]);
    expect(offBody.rewards.map((r) => r.status)).toEqual(['pending']);

    // Flag: flagged, not held.
    await t.action('flag');
    const flagged = await t.referral(m.code);
    await t.send((await provider.checkout(payer, flagged)).deliveries);
    const flaggedBody = await t.converted(flagged);
    expect(flaggedBody.fraud_flags).toEqual(selfReferral(words));
    expect(await t.fraudHold(flagged)).toBeUndefined();
    expect(flaggedBody.rewards.map((r) => r.status)).toEqual(['pending']);
    expect((await t.flags(m.id)).count).toBe(2);
    await t.action('hold');
  });
});

describe('stripe: the same card under another customer', () => {
  let stripe: StripeEmulator;
  const t = account((accountId) =>
    saveProviderConnection(accountId, {
      kind: 'stripe',
      secretKey: stripe.secretKey,
      apiUrl: stripe.url,
      webhookSecret: stripe.webhookSecret,
    }),
  );
  beforeAll(async () => {
    stripe = await startStripeEmulator({ webhookUrl: null });
    await t.setup();
  });
  afterAll(() => stripe?.stop());

  const checkout = async (email: string, card: string, referralId?: string) => {
    const out = await stripe.checkout({ email, card, deliver: false, ...(referralId ? { clientReferenceId: referralId } : {}) });
    await t.send(
      out.delivered.map((e) => ({
        path: (a: string) => `/webhooks/stripe/${a}/`,
        rawBody: e.rawBody,
        headers: { 'content-type': 'application/json', 'stripe-signature': e.signature },
      })),
    );
    return out.result.subscription.id;
  };

  it('is held at conversion, and a card taken up after a clean conversion is flagged by the worker', async () => {
    const card = '4000056655665556';
    const m = await t.member(await checkout('card-owner@pay.example.com', card));

    const atConversion = await t.referral(m.code);
    await checkout('card-alias@pay.example.com', card, atConversion);
    const body = await t.converted(atConversion);
    expect(body.fraud_flags).toEqual(selfReferral(/same card at Stripe/));
    expect(body.rewards.map((r) => r.status)).toEqual(['held']);

    // Converted through the API (the app's conversion call, before the checkout's own events): 200, and the
    // fraud screening of the conversion flags it moments later.
    const byApi = await t.referral(m.code);
    const apiOut = await stripe.checkout({ email: 'card-api@pay.example.com', card, deliver: false });
    const answer = await t.json('POST', `/v1/referrals/${byApi}/conversion/`, { subscription_id: apiOut.result.subscription.id });
    expect(answer.status).toBe(200);
    const apiFlags = await pollUntil(async () => {
      const r = await t.get(byApi);
      return r.fraud_flags.length > 0 ? r.fraud_flags : null;
    });
    expect(apiFlags).toEqual(selfReferral(/same card at Stripe/));

    // A clean conversion with another card, then the subscription switches to the member's card.
    const later = await t.referral(m.code);
    const subscriptionId = await checkout('card-later@pay.example.com', '5555555555554444', later);
    expect((await t.converted(later)).fraud_flags).toEqual([]);
    const switched = await stripe.updatePaymentMethod(subscriptionId, card, { deliver: false });
    await t.send(
      switched.delivered.map((e) => ({
        path: (a: string) => `/webhooks/stripe/${a}/`,
        rawBody: e.rawBody,
        headers: { 'content-type': 'application/json', 'stripe-signature': e.signature },
      })),
    );
    const flagged = await pollUntil(
      async () => {
        const r = await t.get(later);
        return r.fraud_flags.length > 0 ? r : null;
      },
      { timeoutMs: 15_000 },
    );
    expect(flagged.fraud_flags).toEqual(selfReferral(/same card at Stripe/));
    expect((await t.flags(m.id)).results.map((f) => f.subject_id).sort()).toEqual([atConversion, byApi, later].sort());
    await pollUntil(async () => ((await t.get(later)).rewards.every((r) => r.status === 'held') ? true : null), { timeoutMs: 10_000 });
  });
});

describe("the member's payer ids follow its own subscription", () => {
  it('copied when attached, grown when a provider tells more, replaced and removed with the subscription', async () => {
    const { accountId, apiKey } = await newAccount();
    const json = (method: string, path: string, body?: unknown) =>
      api(method, path, { key: apiKey, ...(body === undefined ? {} : { body }) });
    const plan = { id: 'price_1', name: 'Pro', amount: '10.00', currency: 'USD', interval: 'month', frequency: 1, descriptor: null };
    const fields = { unit_price: '10.00', currency: 'USD', status: 'active', next_bill_date: null, plan };
    const stored = async (id: string, email: string, payerIds: string[]) =>
      (await applyProviderUpdate(accountId, { subscriptionId: id, asOfMs: Date.now(), fields: { ...fields, email }, payerIds }))
        .payerIdsLearned;
    const payersOf = async (memberId: string) => memberPayerIds(await getItem(keys.member(accountId, memberId))).sort();

    expect(await stored('sub_own1', 'own@pay.example.com', ['stripe:customer:cus_1', 'stripe:card:fp1'])).toHaveLength(2);
    expect(await stored('sub_own2', 'own2@pay.example.com', ['stripe:customer:cus_2'])).toHaveLength(1);
    const created = await json('POST', '/v1/members/', {
      identifier: 'payer-own',
      email: 'own@member.example.com',
      subscription: { id: 'sub_own1' },
    });
    expect(created.status).toBe(201);
    const memberId = created.body.id as string;
    expect(await payersOf(memberId)).toEqual(['stripe:card:fp1', 'stripe:customer:cus_1']);

    // A later word about the same subscription: stored once, and the member carries it.
    const learned = await applyProviderUpdate(accountId, {
      subscriptionId: 'sub_own1',
      asOfMs: 1,
      fields: {},
      payerIds: ['stripe:card:fp9'],
    });
    expect(learned.payerIdsLearned).toEqual(['stripe:card:fp9']);
    await followPayers(accountId, learned, false);
    expect(await payersOf(memberId)).toEqual(['stripe:card:fp1', 'stripe:card:fp9', 'stripe:customer:cus_1']);
    expect(
      (await applyProviderUpdate(accountId, { subscriptionId: 'sub_own1', asOfMs: 1, fields: {}, payerIds: ['stripe:card:fp9'] }))
        .payerIdsLearned,
    ).toEqual([]);

    // Another subscription attached: its payers replace the old; none attached: none.
    expect((await json('PATCH', `/v1/members/${memberId}/`, { subscription: { id: 'sub_own2' } })).status).toBe(200);
    expect(await payersOf(memberId)).toEqual(['stripe:customer:cus_2']);
    expect((await json('PATCH', `/v1/members/${memberId}/`, { subscription: null })).status).toBe(200);
    expect(await payersOf(memberId)).toEqual([]);
    // The subscription it left tells more: the member no longer carries it.
    await followPayers(
      accountId,
      await applyProviderUpdate(accountId, { subscriptionId: 'sub_own2', asOfMs: 1, fields: {}, payerIds: ['stripe:card:x'] }),
      false,
    );
    expect(await payersOf(memberId)).toEqual([]);
  });
});
