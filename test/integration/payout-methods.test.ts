// Members' payout methods (docs/payouts.md "Members' methods") through the real handlers: `payout_method`
// written by PATCH /v1/members/{id}/ and the portal's PATCH /portal/v1/me/ (only a connected rail, else 400
// in words), the readiness fields of both views, the portal's list of connected rails, and the portal's
// "Set up payouts" for Stripe against the Stripe emulator's Connect side: 409 without Stripe, one Express
// account across two concurrent requests, an onboarding link back to the portal, and Connect's
// account.updated (applyStripeAccountUpdates) making the method ready.
import { startStripeEmulator, type StripeEmulator } from '../../infra/local/emulators/stripe';
import { NO_PAYOUT_EMAIL, STRIPE_NOT_READY, STRIPE_NOT_STARTED } from '../../shared/domain/payout-methods';
import { approveReward } from '../../shared/flows/lifecycle';
import { applyStripeAccountUpdates, STRIPE_NOT_CONNECTED } from '../../shared/flows/payout-methods';
import { getItem } from '../../shared/store/ops';
import { toReferral } from '../../shared/store/referrals';
import { recordRewards } from '../../shared/store/rewards';
import { saveRailConnection } from '../../shared/store/rail-connections';
import { stripeAccountKeys } from '../../shared/store/stripe-accounts';
import { keys } from '../../shared/store/table';
import { api } from '../support/api';
import { newAccount } from '../support/fixtures';

let stripe: StripeEmulator;
let seq = 0;
type Tenant = { accountId: string; apiKey: string };

beforeAll(async () => {
  stripe = await startStripeEmulator({ connect: { webhookUrl: null } });
});
afterAll(async () => {
  await stripe?.stop();
});

const unique = (p: string) => `${p}-${++seq}-${Date.now().toString(36)}`;

async function member(t: Tenant, extra: Record<string, unknown> = {}): Promise<any> {
  const who = unique('pm');
  const res = await api('POST', '/v1/members/', { key: t.apiKey, body: { identifier: who, email: `${who}@example.com`, ...extra } });
  expect(res.status).toBe(201);
  return res.body;
}

async function portalSession(t: Tenant, memberId: string): Promise<string> {
  const link = await api('POST', `/v1/members/${memberId}/portal-sessions/`, { key: t.apiKey, body: {} });
  expect(link.status).toBe(201);
  const opened = await api('POST', '/portal/v1/sessions/', { body: { token: new URL(link.body.url).hash.replace(/^#token=/, '') } });
  expect(opened.status).toBe(201);
  return opened.body.token as string;
}

const patchMember = (t: Tenant, id: string, body: unknown) => api('PATCH', `/v1/members/${id}/`, { key: t.apiKey, body });
const portal = (method: string, path: string, token: string, body?: unknown) =>
  api(method, path, { key: token, ...(body !== undefined ? { body } : {}) });

/** Connections stored as PUT /v1/account/payout-rails/{kind}/ stores them (that route checks them at the rail first). */
async function connect(accountId: string, kind: 'paypal' | 'stripe' | 'wise'): Promise<void> {
  if (kind === 'stripe') {
    await saveRailConnection(accountId, 'stripe', {
      apiUrl: stripe.url,
      credentials: {
        secret_key: stripe.secretKey,
        webhook_secret: stripe.connect.webhookSecret,
        connect_webhook_secret: stripe.connect.connectWebhookSecret,
      },
    });
  } else if (kind === 'paypal') {
    await saveRailConnection(accountId, 'paypal', {
      apiUrl: 'https://paypal.invalid',
      credentials: { client_id: 'client', client_secret: 'secret', webhook_id: 'WH-1' },
    });
  } else {
    await saveRailConnection(accountId, 'wise', {
      apiUrl: 'https://wise.invalid',
      credentials: { api_token: 'token', profile_id: '1', webhook_public_key: 'key' },
    });
  }
}

describe('payout_method on members', () => {
  it('PATCH /v1/members/{id}/ takes only a connected rail or null, and the view says whether the method is ready', async () => {
    const t = await newAccount();
    const m = await member(t);
    expect(m).toMatchObject({ payout_method: null, payout_method_ready: false, payout_method_reason: NO_PAYOUT_EMAIL });

    const refused = await patchMember(t, m.id, { payout_method: 'paypal' });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({
      payout_method: ['PayPal Payouts is not connected for this programme; choose null (the payout file): no payout rail is connected.'],
    });
    expect((await patchMember(t, m.id, { payout_method: 'venmo' })).body).toEqual({ payout_method: ['"venmo" is not a valid choice.'] });
    expect((await patchMember(t, m.id, { payout_method: 3 })).status).toBe(400);
    expect((await patchMember(t, m.id, { payout_method: { a: 1 } })).body).toEqual({ payout_method: ['Not a valid string.'] });

    await connect(t.accountId, 'paypal');
    const wise = await patchMember(t, m.id, { payout_method: 'wise' });
    expect(wise.status).toBe(400);
    expect(wise.body.payout_method[0]).toBe('Wise is not connected for this programme; choose one of "paypal" or null.');

    const paypal = await patchMember(t, m.id, { payout_method: 'paypal' });
    expect(paypal.status).toBe(200);
    expect(paypal.body).toMatchObject({ payout_method: 'paypal', payout_method_ready: false, payout_method_reason: NO_PAYOUT_EMAIL });
    const ready = await patchMember(t, m.id, { payout_email: 'pm@pay.example' });
    expect(ready.body).toMatchObject({ payout_method: 'paypal', payout_method_ready: true, payout_method_reason: null });
    expect((await api('GET', `/v1/members/${m.id}/`, { key: t.apiKey })).body).toMatchObject({
      payout_method: 'paypal',
      payout_method_ready: true,
    });

    // Read-only fields are ignored; null is always allowed (the payout file, to the payout email).
    const none = await patchMember(t, m.id, { payout_method: null, payout_method_ready: false });
    expect(none.status).toBe(200);
    expect(none.body).toMatchObject({ payout_method: null, payout_method_ready: true, payout_method_reason: null });

    // Stripe chosen through the API before any account: not ready, the words say what to do.
    await connect(t.accountId, 'stripe');
    const stripeChosen = await patchMember(t, m.id, { payout_method: 'stripe' });
    expect(stripeChosen.body).toMatchObject({
      payout_method: 'stripe',
      payout_method_ready: false,
      payout_method_reason: STRIPE_NOT_STARTED,
    });
  });

  it("the portal's PATCH me takes payout_method the same way, and its me lists the connected rails", async () => {
    const t = await newAccount();
    const m = await member(t, { payout_email: 'portal@pay.example' });
    const token = await portalSession(t, m.id);
    const me = await portal('GET', '/portal/v1/me/', token);
    expect(me.status).toBe(200);
    expect(me.body.program.payout_methods).toEqual([]);
    expect(me.body.member).toMatchObject({ payout_method: null, payout_method_ready: true, payout_method_reason: null });

    const refused = await portal('PATCH', '/portal/v1/me/', token, { payout_method: 'wise' });
    expect(refused.status).toBe(400);
    expect(refused.body.payout_method).toEqual([
      'Wise is not connected for this programme; choose null (the payout file): no payout rail is connected.',
    ]);

    await connect(t.accountId, 'wise');
    await connect(t.accountId, 'paypal');
    const chosen = await portal('PATCH', '/portal/v1/me/', token, { payout_method: 'wise' });
    expect(chosen.status).toBe(200);
    expect(chosen.body.program.payout_methods).toEqual(['paypal', 'wise']);
    expect(chosen.body.member).toMatchObject({ payout_method: 'wise', payout_method_ready: true, payout_method_reason: null });
    const noEmail = await portal('PATCH', '/portal/v1/me/', token, { payout_email: null });
    expect(noEmail.body.member).toMatchObject({ payout_method: 'wise', payout_method_ready: false, payout_method_reason: NO_PAYOUT_EMAIL });
    // The API sees what the member chose.
    expect((await api('GET', `/v1/members/${m.id}/`, { key: t.apiKey })).body).toMatchObject({ payout_method: 'wise' });
  });
});

describe('Stripe: "Set up payouts"', () => {
  it('409 when the programme has not connected Stripe; nothing is created', async () => {
    const t = await newAccount();
    const m = await member(t);
    const token = await portalSession(t, m.id);
    const accountsBefore = stripe.connect.ledger.accounts.size;
    const res = await portal('POST', '/portal/v1/me/stripe-account-link/', token);
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ detail: STRIPE_NOT_CONNECTED });
    expect(stripe.connect.ledger.accounts.size).toBe(accountsBefore);
    expect((await api('GET', `/v1/members/${m.id}/`, { key: t.apiKey })).body.payout_method).toBeNull();
  });

  it('two concurrent requests make one Express account; the link comes back to the portal; account.updated makes it ready', async () => {
    const t = await newAccount();
    await connect(t.accountId, 'stripe');
    const m = await member(t);
    const token = await portalSession(t, m.id);
    const accountsBefore = stripe.connect.ledger.accounts.size;

    const [a, b] = await Promise.all([
      portal('POST', '/portal/v1/me/stripe-account-link/', token),
      portal('POST', '/portal/v1/me/stripe-account-link/', token),
    ]);
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(Object.keys(a.body).sort()).toEqual(['expires_at', 'url']);
    expect(a.body.url).toMatch(new RegExp(`^${stripe.url}/_emulator/connect/onboard/`));
    expect(a.body.expires_at).toBeGreaterThan(Math.floor(Date.now() / 1000));
    expect(stripe.connect.ledger.accounts.size).toBe(accountsBefore + 1);

    const item = await getItem(keys.member(t.accountId, m.id));
    const acct = item?.stripe_account_id as string;
    expect(acct).toMatch(/^acct_/);
    expect(stripe.connect.ledger.accounts.get(acct)?.metadata).toMatchObject({ refloop_member_id: m.id });
    expect(await getItem(stripeAccountKeys.account(t.accountId, acct))).toMatchObject({ member_id: m.id });

    // The link's way back: the member's portal page.
    const link = [...stripe.connect.ledger.links.values()].find((l) => l.account === acct);
    // The page the portal link opened (the app keeps the tab's session under its path's account id).
    expect(link?.returnUrl).toMatch(new RegExp(`/portal/${t.accountId}/\\?stripe=return$`));
    expect(link?.refreshUrl).toMatch(new RegExp(`/portal/${t.accountId}/\\?stripe=refresh$`));

    const before = await portal('GET', '/portal/v1/me/', token);
    expect(before.body.member).toMatchObject({
      payout_method: 'stripe',
      payout_method_ready: false,
      payout_method_reason: STRIPE_NOT_READY,
    });

    // A third request (the member clicked again) reuses the account.
    expect((await portal('POST', '/portal/v1/me/stripe-account-link/', token)).status).toBe(201);
    expect(stripe.connect.ledger.accounts.size).toBe(accountsBefore + 1);

    // Connect's account.updated, as the rail webhook intake hands it on (twice: a redelivery changes nothing).
    await stripe.connect.onboard(acct);
    await applyStripeAccountUpdates(t.accountId, [{ destination: acct, ready: true }]);
    await applyStripeAccountUpdates(t.accountId, [{ destination: acct, ready: true }]);
    const after = await api('GET', `/v1/members/${m.id}/`, { key: t.apiKey });
    expect(after.body).toMatchObject({ payout_method: 'stripe', payout_method_ready: true, payout_method_reason: null });

    // An account of no member is skipped; Stripe taking transfers away makes the method not ready again.
    await applyStripeAccountUpdates(t.accountId, [
      { destination: 'acct_NOBODY123', ready: true },
      { destination: acct, ready: false },
    ]);
    expect((await portal('GET', '/portal/v1/me/', token)).body.member).toMatchObject({
      payout_method_ready: false,
      payout_method_reason: STRIPE_NOT_READY,
    });
  });
});

describe("the member's collecting payout follows the method's readiness", () => {
  /** A commission member with an approved reward: their collecting payout's id. */
  async function collecting(t: Tenant, m: { id: string; code: string }): Promise<string> {
    const referral = await api('POST', '/v1/referrals/', { key: t.apiKey, body: { user_identifier: unique('u'), member_code: m.code } });
    expect(referral.status).toBe(200);
    const stored = toReferral(await getItem(keys.referral(t.accountId, referral.body.id)));
    if (!stored) throw new Error('fixture referral missing');
    const [reward] = (
      await recordRewards(
        t.accountId,
        stored,
        [{ payment_id: Date.now() * 100 + ++seq, type: 'commission', amount: 400, currency: 'USD' }],
        false,
        true,
      )
    ).rewards;
    return (await approveReward(t.accountId, reward!.id)).payout_id as string;
  }
  const payoutStatus = async (t: Tenant, id: string) => (await api('GET', `/v1/payouts/${id}/`, { key: t.apiKey })).body.status;

  it('Stripe chosen: open until Stripe reports the account ready, due at once then, open again when Stripe takes it back', async () => {
    const t = await newAccount();
    await connect(t.accountId, 'stripe');
    const campaign = await api('POST', '/v1/campaigns/', {
      key: t.apiKey,
      body: { name: unique('Commission'), allows_commission: true, commission_amount: '4.00', hold_days: 0 },
    });
    expect(campaign.status).toBe(201);
    const m = await member(t, { campaign: { id: campaign.body.id }, payout_email: 'payee@pay.example' });
    const payoutId = await collecting(t, m);
    expect(await payoutStatus(t, payoutId)).toBe('due');

    // The member picks Stripe in the portal: no account yet, so the payout waits.
    const token = await portalSession(t, m.id);
    expect((await portal('POST', '/portal/v1/me/stripe-account-link/', token)).status).toBe(201);
    expect(await payoutStatus(t, payoutId)).toBe('open');
    const acct = (await getItem(keys.member(t.accountId, m.id)))?.stripe_account_id as string;

    await stripe.connect.onboard(acct);
    await applyStripeAccountUpdates(t.accountId, [{ destination: acct, ready: true }]);
    expect(await payoutStatus(t, payoutId)).toBe('due');
    await applyStripeAccountUpdates(t.accountId, [{ destination: acct, ready: false }]);
    expect(await payoutStatus(t, payoutId)).toBe('open');

    // Back to PayPal through the API (connected now): the payout email makes it due again at once.
    await connect(t.accountId, 'paypal');
    expect((await patchMember(t, m.id, { payout_method: 'paypal' })).body.payout_method_ready).toBe(true);
    expect(await payoutStatus(t, payoutId)).toBe('due');
  });
});
