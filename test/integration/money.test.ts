// The money side (docs/design/money.md) on real parts: signed webhooks of each provider's emulator through the intake,
// the local SQS with the real workers, DynamoDB Local. Percentage commissions, the reward lifecycle
// (hold, approval, void, refunds before and after payment), payouts (due once the minimum and a payout
// email are there), batches with their PayPal / Wise / CSV files, mark-paid and mark-failed, the lists with
// their exact counts, and what retries and concurrency must never do (pay twice, share a payout).
import type { Pollers } from '../../infra/local/pollers';
import { approveDue, startApprovals } from '../../shared/flows/lifecycle';
import { api, type ApiResponse } from '../support/api';
import { newAccount, pollUntil } from '../support/fixtures';
import { deliver, PROVIDER_HARNESSES, type Delivery, type ProviderHarness } from '../support/provider-harness';
import { startTestPollers, startTestQueues, type TestQueues } from '../support/queues';

let queues: TestQueues;
let pollers: Pollers;

beforeAll(async () => {
  // The money events go to an endpoint on a closed loopback port: its deliveries say which were sent.
  process.env.WEBHOOK_ALLOW_LOOPBACK = '1';
  queues = await startTestQueues();
  pollers = startTestPollers(queues);
});

afterAll(async () => {
  await pollers?.stop();
  await queues?.stop();
});

interface Reward {
  id: string;
  type: string;
  amount: string;
  status: string;
  payout_id: string | null;
  reverses: string | null;
  approves_at: number | null;
}

/** An account on one provider's emulator, with helpers around the API. */
function moneyWorld(provider: ProviderHarness) {
  const w = { accountId: '', key: '', serial: 0 };
  const json = (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
    api(method, path, { key: w.key, ...(body === undefined ? {} : { body }), ...(headers ? { headers } : {}) });
  const send = async (deliveries: Delivery[]) => {
    for (const d of deliveries) expect((await deliver(w.accountId, d)).status).toBe(200);
  };
  const referral = async (id: string) =>
    (await json('GET', `/v1/referrals/${id}/`)).body as { rewards: Reward[]; member_id: string; reward_percent: string | null };
  const rewardsOf = (id: string, count: number) =>
    pollUntil(async () => {
      const r = await referral(id);
      return r.rewards.length === count ? r.rewards : null;
    });
  const expectOk = (res: ApiResponse, status = 200) => {
    // The body is shown when the status is not the one expected.
    expect({ status: res.status, body: res.status === status ? null : res.body }).toEqual({ status, body: null });
    return res.body;
  };

  /** A campaign, a member (with a payout email unless `noEmail`) and a referral converted by a checkout. */
  async function earn(terms: Record<string, unknown>, opts: { noEmail?: boolean; memberId?: string } = {}) {
    const n = ++w.serial;
    let memberId = opts.memberId;
    if (!memberId) {
      const campaign = expectOk(
        await json('POST', '/v1/campaigns/', {
          name: `money-${provider.kind}-${n}`,
          allows_commission: true,
          commission_currency: 'USD',
          ...terms,
        }),
        201,
      );
      const member = expectOk(
        await json('POST', '/v1/members/', {
          identifier: `m-${n}`,
          email: `m-${n}@example.com`,
          first_name: 'Mia',
          last_name: `No${n}`,
          campaign: { id: campaign.id },
          ...(opts.noEmail ? {} : { payout_email: `pay-${n}@example.com` }),
        }),
        201,
      );
      memberId = member.id as string;
    }
    const member = expectOk(await json('GET', `/v1/members/${memberId}/`));
    const ref = expectOk(await json('POST', '/v1/referrals/', { user_identifier: `user-${provider.kind}-${n}`, member_code: member.code }));
    const out = await provider.checkout(`buyer-${provider.kind}-${n}@example.com`, ref.id);
    await send(out.deliveries);
    return { referralId: ref.id as string, memberId: memberId as string, checkout: out };
  }

  return { w, json, send, referral, rewardsOf, expectOk, earn };
}

describe.each(PROVIDER_HARNESSES.map((h) => [h.kind, h] as const))(
  '%s: from a percentage commission to a paid Wise batch',
  (_kind, provider: ProviderHarness) => {
    beforeAll(() => provider.start());
    afterAll(() => provider.stop());
    const m = moneyWorld(provider);
    beforeAll(async () => {
      ({ accountId: m.w.accountId, apiKey: m.w.key } = await newAccount('unlimited'));
      await provider.connect(m.w.accountId);
    });

    it('earns 25% of the payment, approves it at once with a hold of 0 days, pays it through a batch, and every figure agrees', async () => {
      const { referralId, memberId, checkout } = await m.earn({
        commission_type: 'percentage',
        commission_percent: '25',
        hold_days: 0,
        min_payout: '2.00',
      });
      expect((await m.referral(referralId)).reward_percent).toBe('25.00');
      // 25% of the 10.00 checkout (no tax), approved by the evaluation itself (hold 0).
      const [reward] = await pollUntil(async () => {
        const rewards = await m.rewardsOf(referralId, 1);
        return rewards[0]?.status === 'approved' ? rewards : null;
      });
      expect(reward).toMatchObject({ type: 'commission', amount: '2.50', status: 'approved', payout_id: expect.stringMatching(/^po_/) });
      const payout = m.expectOk(await m.json('GET', `/v1/payouts/${reward!.payout_id}/`));
      expect(payout).toMatchObject({
        member_id: memberId,
        amount: '2.50',
        currency: 'USD',
        status: 'due',
        reward_count: 1,
        reward_ids: [reward!.id],
      });
      expect(m.expectOk(await m.json('GET', '/v1/payouts/summary/'))).toEqual({ due: { USD: '2.50' }, open: {}, processing: {}, paid: {} });

      const batch = m.expectOk(
        await m.json('POST', '/v1/payout-batches/', { format: 'wise', currency: 'usd' }, { 'Idempotency-Key': `batch-${provider.kind}` }),
        201,
      );
      expect(batch).toMatchObject({
        format: 'wise',
        currency: 'USD',
        status: 'processing',
        payout_ids: [payout.id],
        payout_count: 1,
        amount: '2.50',
      });
      // The retry with the same key answers the same batch and takes nothing more.
      const again = await m.json(
        'POST',
        '/v1/payout-batches/',
        { format: 'wise', currency: 'usd' },
        { 'Idempotency-Key': `batch-${provider.kind}` },
      );
      expect(again.body).toEqual(batch);
      const file = await m.json('GET', `/v1/payout-batches/${batch.id}/file`);
      expect(file.status).toBe(200);
      expect(file.headers['content-type']).toMatch(/^text\/csv/);
      const lines = String(file.text).split('\r\n');
      expect(lines[0]).toBe('name,recipientEmail,paymentReference,receiverType,amountCurrency,amount,sourceCurrency,targetCurrency');
      expect(lines[1]).toMatch(
        new RegExp(
          `^Mia No${m.w.serial},pay-${m.w.serial}@example.com,Referral commissions [A-Z][a-z]{2} \\d{4},PERSON,target,2.50,USD,USD$`,
        ),
      );
      expect(lines.slice(2)).toEqual(['']);

      const paid = m.expectOk(await m.json('POST', `/v1/payout-batches/${batch.id}/mark-paid/`, { reference: 'WISE-1' }));
      expect(paid.status).toBe('paid');
      expect(m.expectOk(await m.json('GET', `/v1/payouts/${payout.id}/`))).toMatchObject({
        status: 'paid',
        reference: 'WISE-1',
        paid_at: expect.any(Number),
        payout_email: `pay-${m.w.serial}@example.com`,
      });
      expect((await m.referral(referralId)).rewards[0]).toMatchObject({ status: 'paid', paid_at: expect.any(Number) });
      const member = m.expectOk(await m.json('GET', `/v1/members/${memberId}/`));
      expect(member.stats).toMatchObject({
        commission_earned: '2.50',
        commission_pending: '0.00',
        commission_approved: '0.00',
        commission_paid: '2.50',
      });
      expect(m.expectOk(await m.json('GET', '/v1/payouts/summary/'))).toEqual({ due: {}, open: {}, processing: {}, paid: { USD: '2.50' } });
      expect(m.expectOk(await m.json('GET', `/v1/rewards/?status=paid&member=${memberId}`))).toMatchObject({
        count: 1,
        results: [{ id: reward!.id, status: 'paid', referral_id: referralId, member_id: memberId }],
      });
      // A refund after payment: a negative reward, approved, netting against the member's next payout.
      await m.send(await provider.refund(checkout.refundable));
      const rewards = await pollUntil(async () => {
        const r = await m.rewardsOf(referralId, 2);
        return r[1]?.status === 'approved' ? r : null;
      });
      expect(rewards[0]).toMatchObject({ status: 'paid' });
      expect(rewards[1]).toMatchObject({
        amount: '-2.50',
        reverses: reward!.id,
        status: 'approved',
        payout_id: expect.stringMatching(/^po_/),
      });
      expect(rewards[1]!.payout_id).not.toBe(payout.id);
      expect(m.expectOk(await m.json('GET', `/v1/payouts/${rewards[1]!.payout_id}/`))).toMatchObject({ amount: '-2.50', status: 'open' });
      expect(m.expectOk(await m.json('GET', `/v1/members/${memberId}/`)).stats).toMatchObject({
        commission_earned: '0.00',
        commission_approved: '-2.50',
        commission_paid: '2.50',
      });

      // The reports agree, with no lag: today's buckets of the account, the member and the campaign.
      const now = Math.floor(Date.now() / 1000);
      const today = now - (now % 86_400);
      const series = async (metric: string, scope = '') =>
        m.expectOk(await m.json('GET', `/v1/reports/timeseries/?metric=${metric}&from=${today}&to=${now}${scope}`)).buckets[0];
      expect(await series('referrals')).toEqual({ start: today, end: today + 86_400, value: 1, amounts: null });
      expect(await series('conversions', `&member=${memberId}`)).toMatchObject({ value: 1 });
      expect(await series('revenue')).toMatchObject({ value: null, amounts: { USD: '10.00' } });
      expect(await series('refunds', `&member=${memberId}`)).toMatchObject({ amounts: { USD: '10.00' } });
      // Earned 2.50, then -2.50 by the clawback: net 0.00 today; paid 2.50.
      expect(await series('commission_earned')).toMatchObject({ amounts: { USD: '0.00' } });
      expect(await series('commission_paid', `&member=${memberId}`)).toMatchObject({ amounts: { USD: '2.50' } });
      const overview = m.expectOk(await m.json('GET', `/v1/reports/overview/?from=${today}&to=${now}`));
      expect(overview.current).toMatchObject({ referrals: 1, conversions: 1, revenue: { USD: '10.00' }, commission_paid: { USD: '2.50' } });
      expect(overview.previous).toMatchObject({ referrals: 0, conversions: 0, revenue: {} });
      const top = m.expectOk(await m.json('GET', `/v1/reports/members/?sort=revenue&from=${today}&to=${now}`));
      expect(top).toMatchObject({ currency: 'USD', results: [{ member_id: memberId, conversions: 1, revenue: { USD: '10.00' } }] });
    });
  },
);

describe('the lifecycle in detail (Paddle Classic)', () => {
  const provider = PROVIDER_HARNESSES.find((h) => h.kind === 'paddle-classic')!;
  beforeAll(() => provider.start());
  afterAll(() => provider.stop());
  const m = moneyWorld(provider);
  beforeAll(async () => {
    ({ accountId: m.w.accountId, apiKey: m.w.key } = await newAccount('unlimited'));
    await provider.connect(m.w.accountId);
  });

  it('holds a commission pending until approves_at; the hourly job approves it then, not before', async () => {
    const { referralId } = await m.earn({ commission_amount: '4.00', hold_days: 30 });
    const [pending] = await m.rewardsOf(referralId, 1);
    expect(pending).toMatchObject({ status: 'pending', payout_id: null });
    expect(pending!.approves_at! - (await m.json('GET', `/v1/rewards/${pending!.id}/`)).body.created_at).toBe(30 * 86_400);
    expect(await approveDue(m.w.accountId)).toEqual({ approved: 0, failed: 0 });
    expect((await m.referral(referralId)).rewards[0]!.status).toBe('pending');
    // The job queues one message per account; the worker approves what is due (30 days later).
    expect((await startApprovals()).accounts).toBeGreaterThan(0);
    expect(await approveDue(m.w.accountId, pending!.approves_at!)).toEqual({ approved: 1, failed: 0 });
    expect((await m.referral(referralId)).rewards[0]).toMatchObject({
      status: 'approved',
      approved_at: expect.any(Number),
      payout_id: expect.stringMatching(/^po_/),
    });
    // Once approved, the job has nothing more to do for it.
    expect(await approveDue(m.w.accountId, pending!.approves_at! + 86_400)).toEqual({ approved: 0, failed: 0 });
  });

  it('manual approval waits for POST approve/; approving twice, or concurrently, approves once', async () => {
    const { referralId, memberId } = await m.earn({ commission_amount: '3.00', approval: 'manual', min_payout: '5.00' });
    const [pending] = await m.rewardsOf(referralId, 1);
    expect(pending).toMatchObject({ status: 'pending', approves_at: null });
    expect(await approveDue(m.w.accountId, Math.floor(Date.now() / 1000) + 400 * 86_400)).toMatchObject({ approved: 0 });
    const answers = await Promise.all([1, 2, 3, 4].map(() => m.json('POST', `/v1/rewards/${pending!.id}/approve/`)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect(new Set(answers.map((a) => a.body.payout_id)).size).toBe(1);
    const payout = m.expectOk(await m.json('GET', `/v1/payouts/${answers[0]!.body.payout_id}/`));
    // Below the campaign's 5.00 minimum: open.
    expect(payout).toMatchObject({ amount: '3.00', status: 'open', reward_count: 1 });
    expect(m.expectOk(await m.json('GET', `/v1/members/${memberId}/`)).stats).toMatchObject({
      commission_pending: '0.00',
      commission_approved: '3.00',
    });
    // A second commission of the same member joins the same payout, which reaches the minimum: due.
    const second = await m.earn({}, { memberId });
    const [next] = await m.rewardsOf(second.referralId, 1);
    m.expectOk(await m.json('POST', `/v1/rewards/${next!.id}/approve/`));
    expect(m.expectOk(await m.json('GET', `/v1/payouts/${payout.id}/`))).toMatchObject({ amount: '6.00', status: 'due', reward_count: 2 });
    expect(m.expectOk(await m.json('GET', `/v1/payouts/?member=${memberId}`))).toMatchObject({ count: 1 });
  });

  it('a payout is due only once the member has a payout email; removing it makes it open again', async () => {
    const { referralId, memberId } = await m.earn({ commission_amount: '2.00', hold_days: 0 }, { noEmail: true });
    const [reward] = await pollUntil(async () =>
      (await m.rewardsOf(referralId, 1))[0]?.status === 'approved' ? m.rewardsOf(referralId, 1) : null,
    );
    expect(m.expectOk(await m.json('GET', `/v1/payouts/${reward!.payout_id}/`)).status).toBe('open');
    expect(m.expectOk(await m.json('PATCH', `/v1/members/${memberId}/`, { payout_email: 'Pay@Example.com' })).payout_email).toBe(
      'Pay@example.com',
    );
    expect(m.expectOk(await m.json('GET', `/v1/payouts/${reward!.payout_id}/`)).status).toBe('due');
    m.expectOk(await m.json('PATCH', `/v1/members/${memberId}/`, { payout_email: null }));
    expect(m.expectOk(await m.json('GET', `/v1/payouts/${reward!.payout_id}/`)).status).toBe('open');
    expect((await m.json('PATCH', `/v1/members/${memberId}/`, { payout_email: 'not-an-email' })).body).toEqual({
      payout_email: ['Enter a valid email address.'],
    });
  });

  it('voids an approved reward out of its payout, once; a voided or paid reward cannot be approved or voided again', async () => {
    const { referralId, memberId } = await m.earn({ commission_amount: '5.00', hold_days: 0 });
    const [reward] = await pollUntil(async () =>
      (await m.rewardsOf(referralId, 1))[0]?.status === 'approved' ? m.rewardsOf(referralId, 1) : null,
    );
    const payoutId = reward!.payout_id!;
    const voids = await Promise.all([1, 2, 3].map(() => m.json('POST', `/v1/rewards/${reward!.id}/void/`, { reason: 'fraud' })));
    expect(voids.map((v) => v.status)).toEqual([200, 200, 200]);
    expect(voids[0]!.body).toMatchObject({ status: 'voided', void_reason: 'fraud', payout_id: null, voided_at: expect.any(Number) });
    expect(m.expectOk(await m.json('GET', `/v1/payouts/${payoutId}/`))).toMatchObject({ amount: '0.00', status: 'open', reward_count: 0 });
    expect(m.expectOk(await m.json('GET', `/v1/members/${memberId}/`)).stats).toMatchObject({
      commission_earned: '0.00',
      commission_approved: '0.00',
    });
    expect(await m.json('POST', `/v1/rewards/${reward!.id}/approve/`)).toMatchObject({ status: 409 });
    expect((await m.json('POST', `/v1/rewards/${reward!.id}/void/`, { reason: 'nope' })).body).toEqual({
      reason: ['"nope" is not a valid choice.'],
    });
    expect((await m.json('POST', '/v1/rewards/0190a1c3d4e57f6a8b9c0d1e2f3a4b5c/void/', {})).status).toBe(404);
    // Another account sees none of it.
    const other = await newAccount();
    expect((await api('GET', `/v1/rewards/${reward!.id}/`, { key: other.apiKey })).status).toBe(404);
    expect((await api('POST', `/v1/rewards/${reward!.id}/approve/`, { key: other.apiKey })).status).toBe(404);
    expect((await api('GET', `/v1/payouts/${payoutId}/`, { key: other.apiKey })).status).toBe(404);
  });

  it('a full refund before payment voids the reward and its clawback and takes it out of its payout', async () => {
    const { referralId, checkout } = await m.earn({ commission_amount: '6.00', hold_days: 0 });
    const [reward] = await pollUntil(async () =>
      (await m.rewardsOf(referralId, 1))[0]?.status === 'approved' ? m.rewardsOf(referralId, 1) : null,
    );
    await m.send(await provider.refund(checkout.refundable));
    const rewards = await m.rewardsOf(referralId, 2);
    expect(rewards.map((r) => [r.amount, r.status])).toEqual([
      ['6.00', 'voided'],
      ['-6.00', 'voided'],
    ]);
    expect(m.expectOk(await m.json('GET', `/v1/payouts/${reward!.payout_id}/`))).toMatchObject({ amount: '0.00', status: 'open' });
  });

  it('a failed payout returns its rewards to approved in the next payout; a paid reward is never voided', async () => {
    const money = ['reward.approved', 'reward.paid', 'payout.due', 'payout.paid', 'payout.failed'];
    const endpoint = m.expectOk(await m.json('POST', '/v1/webhook-endpoints/', { url: 'http://127.0.0.1:9/money', events: money }), 201);
    const { referralId, memberId } = await m.earn({ commission_amount: '7.00', hold_days: 0 });
    const [reward] = await pollUntil(async () =>
      (await m.rewardsOf(referralId, 1))[0]?.status === 'approved' ? m.rewardsOf(referralId, 1) : null,
    );
    const batch = m.expectOk(
      await m.json('POST', '/v1/payout-batches/', { format: 'paypal', currency: 'USD', payout_ids: [reward!.payout_id] }),
      201,
    );
    expect(m.expectOk(await m.json('GET', `/v1/payouts/${reward!.payout_id}/`)).status).toBe('processing');
    // In processing, it cannot be voided, nor taken by another batch.
    expect((await m.json('POST', `/v1/rewards/${reward!.id}/void/`, {})).status).toBe(409);
    expect((await m.json('POST', '/v1/payout-batches/', { format: 'csv', currency: 'USD', payout_ids: [reward!.payout_id] })).status).toBe(
      409,
    );
    const paypal = (await m.json('GET', `/v1/payout-batches/${batch.id}/file`)).text as string;
    expect(paypal.split('\r\n')[0]).toBe(
      `pay-${m.w.serial}@example.com,7.00,USD,${String(reward!.payout_id).slice(0, 30)},Referral commissions ${paypal.split('Referral commissions ')[1]!.split(',')[0]},PAYPAL`,
    );

    // Canceling another processing payout (taken out of the batch unpaid) returns its rewards the same way.
    const other = await m.earn({}, { memberId });
    const [otherReward] = await pollUntil(async () =>
      (await m.rewardsOf(other.referralId, 1))[0]?.status === 'approved' ? m.rewardsOf(other.referralId, 1) : null,
    );
    m.expectOk(await m.json('POST', '/v1/payout-batches/', { format: 'csv', currency: 'USD', payout_ids: [otherReward!.payout_id] }), 201);
    expect(
      m.expectOk(await m.json('POST', `/v1/payouts/${otherReward!.payout_id}/cancel/`, { reason: 'paid by bank transfer' })),
    ).toMatchObject({ status: 'canceled', failure_reason: 'paid by bank transfer' });
    expect((await m.referral(other.referralId)).rewards[0]).toMatchObject({ status: 'approved' });
    expect((await m.referral(other.referralId)).rewards[0]!.payout_id).not.toBe(otherReward!.payout_id);
    const failed = m.expectOk(await m.json('POST', `/v1/payouts/${reward!.payout_id}/mark-failed/`, { reason: 'PayPal account closed' }));
    expect(failed).toMatchObject({ status: 'failed', failure_reason: 'PayPal account closed' });
    const back = (await m.referral(referralId)).rewards[0]!;
    expect(back).toMatchObject({ status: 'approved' });
    expect(back.payout_id).not.toBe(reward!.payout_id);
    expect(m.expectOk(await m.json('GET', `/v1/payouts/${back.payout_id}/`))).toMatchObject({
      status: 'due',
      amount: '14.00',
      reward_count: 2,
    });
    // Paid directly (outside a batch), twice: paid once.
    const [p1, p2] = await Promise.all([
      m.json('POST', `/v1/payouts/${back.payout_id}/mark-paid/`, { reference: 'manual' }),
      m.json('POST', `/v1/payouts/${back.payout_id}/mark-paid/`, {}),
    ]);
    expect([p1.status, p2.status]).toEqual([200, 200]);
    expect(m.expectOk(await m.json('GET', `/v1/members/${memberId}/`)).stats).toMatchObject({
      commission_paid: '14.00',
      commission_approved: '0.00',
    });
    expect((await m.json('POST', `/v1/rewards/${reward!.id}/void/`, {})).status).toBe(409);
    expect((await m.json('POST', `/v1/payouts/${back.payout_id}/mark-failed/`, { reason: 'x' })).status).toBe(409);
    // Every money event of that walk reached the endpoint's deliveries, each once per effect.
    const types = await pollUntil(async () => {
      const page = m.expectOk(await m.json('GET', `/v1/webhook-endpoints/${endpoint.id}/deliveries/?page_size=100`));
      const seen = page.results.map((d: { event_type: string }) => d.event_type).sort();
      // Both rewards of the paid payout: wait for the second reward.paid too, then check nothing came twice.
      return money.every((t) => seen.includes(t)) && seen.filter((t: string) => t === 'reward.paid').length >= 2 ? seen : null;
    });
    expect(types.filter((t: string) => t === 'payout.failed')).toHaveLength(1);
    expect(types.filter((t: string) => t === 'payout.paid')).toHaveLength(1);
    expect(types.filter((t: string) => t === 'reward.paid')).toHaveLength(2); // both rewards of the paid payout
  });

  it('deleting a referral voids its unpaid commissions out of their payout and takes them out of the ledger; a paid one keeps its referral (409)', async () => {
    const kept = await m.earn({ commission_amount: '3.00', hold_days: 0 });
    const gone = await m.earn({}, { memberId: kept.memberId });
    const [a] = await pollUntil(async () =>
      (await m.rewardsOf(kept.referralId, 1))[0]?.status === 'approved' ? m.rewardsOf(kept.referralId, 1) : null,
    );
    await pollUntil(async () => ((await m.rewardsOf(gone.referralId, 1))[0]?.status === 'approved' ? true : null));
    expect(m.expectOk(await m.json('GET', `/v1/payouts/${a!.payout_id}/`))).toMatchObject({ amount: '6.00', reward_count: 2 });
    const before = m.expectOk(await m.json('GET', `/v1/rewards/?member=${kept.memberId}`)).count;
    expect((await m.json('DELETE', `/v1/referrals/${gone.referralId}/`)).status).toBe(204);
    expect(m.expectOk(await m.json('GET', `/v1/payouts/${a!.payout_id}/`))).toMatchObject({ amount: '3.00', reward_count: 1 });
    expect(m.expectOk(await m.json('GET', `/v1/rewards/?member=${kept.memberId}`)).count).toBe(before - 1);
    expect(m.expectOk(await m.json('GET', `/v1/members/${kept.memberId}/`)).stats).toMatchObject({
      commission_earned: '3.00',
      commission_approved: '3.00',
      commission_pending: '0.00',
    });
    m.expectOk(await m.json('POST', `/v1/payouts/${a!.payout_id}/mark-paid/`, {}));
    const refused = await m.json('DELETE', `/v1/referrals/${kept.referralId}/`);
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toContain('paid');
    expect((await m.json('GET', `/v1/referrals/${kept.referralId}/`)).status).toBe(200);
  });

  it('two concurrent batches never share a payout, and every due payout lands in exactly one', async () => {
    // A fresh account: only these six payouts are due in it.
    ({ accountId: m.w.accountId, apiKey: m.w.key } = await newAccount('unlimited'));
    await provider.connect(m.w.accountId);
    const due: string[] = [];
    for (let i = 0; i < 6; i++) await m.earn({ commission_amount: '1.00', hold_days: 0 });
    await pollUntil(
      async () => {
        const page = m.expectOk(await m.json('GET', '/v1/payouts/?status=due&currency=USD&page_size=100'));
        due.splice(0, due.length, ...page.results.map((p: { id: string }) => p.id));
        return page.count === 6 && due.length === 6;
      },
      { timeoutMs: 20_000 },
    );
    const answers = await Promise.all([
      m.json('POST', '/v1/payout-batches/', { format: 'csv', currency: 'USD' }),
      m.json('POST', '/v1/payout-batches/', { format: 'wise', currency: 'USD' }),
    ]);
    const taken = answers.filter((a) => a.status === 201).flatMap((a) => a.body.payout_ids as string[]);
    expect(taken.sort()).toEqual([...due].sort());
    for (const a of answers) expect([201, 409]).toContain(a.status);
    expect(m.expectOk(await m.json('GET', '/v1/payouts/?status=due&currency=USD')).count).toBe(0);
    expect(m.expectOk(await m.json('GET', '/v1/payouts/?status=processing&currency=USD')).count).toBe(6);
    expect((await m.json('POST', '/v1/payout-batches/', { format: 'csv', currency: 'USD' })).body).toEqual({
      detail: 'No payout is due in USD.',
    });
    expect((await m.json('POST', '/v1/payout-batches/', { format: 'csv', currency: 'EUR' })).body).toEqual({
      detail: 'No payout is due in EUR.',
    });
  });

  it('lists rewards with filters and exact counts, and refuses what it cannot answer with a 400', async () => {
    const all = m.expectOk(await m.json('GET', '/v1/rewards/?page_size=2'));
    expect(all.count).toBe(6);
    expect(all.results).toHaveLength(2);
    const next = m.expectOk(await api('GET', all.next.replace(/^https?:\/\/[^/]+/, ''), { key: m.w.key }));
    expect(next.results[0].id < all.results[1].id).toBe(true);
    const voided = m.expectOk(await m.json('GET', '/v1/rewards/?status=voided'));
    expect(voided.count).toBe(voided.results.length);
    expect(voided.results.every((r: Reward) => r.status === 'voided')).toBe(true);
    const commissions = m.expectOk(await m.json('GET', '/v1/rewards/?type=commission&page_size=100'));
    expect(commissions.count).toBe(all.count);
    expect((await m.json('GET', '/v1/rewards/?type=credit')).body).toMatchObject({ count: 0, results: [] });
    expect((await m.json('GET', '/v1/rewards/?status=paidd')).status).toBe(400);
    // Member or campaign combine with type and status (issue 23 #14); member and campaign together do not.
    expect((await m.json('GET', '/v1/rewards/?member=0190a1c3d4e57f6a8b9c0d1e2f3a4b5c&type=credit')).body).toMatchObject({
      count: 0,
      results: [],
    });
    expect((await m.json('GET', '/v1/rewards/?member=0190a1c3d4e57f6a8b9c0d1e2f3a4b5c&campaign=a1b2c3d4')).body).toEqual({
      detail: 'Filter by member or by campaign, not both (each may be combined with type and status).',
    });
    expect((await m.json('GET', '/v1/payouts/?currency=EURO')).status).toBe(400);
    expect((await m.json('POST', '/v1/payout-batches/', { format: 'venmo', currency: 'USD' })).body).toEqual({
      format: ['"venmo" is not a valid choice.'],
    });
    expect((await m.json('POST', '/v1/payout-batches/', { format: 'csv', currency: 'USD', payout_ids: ['po_x'] })).status).toBe(400);
    expect((await m.json('POST', '/v1/payouts/po_0190a1d2e3f47a8b9c0d1e2f3a4b5c6d/mark-failed/', {})).body).toEqual({
      reason: ['This field is required.'],
    });
    expect((await m.json('GET', '/v1/payout-batches/pb_0190a1d2e3f47a8b9c0d1e2f3a4b5c6d/')).status).toBe(404);
    expect((await m.json('GET', '/v1/payout-batches/pb_nope/file')).status).toBe(404);
    // Exports: paged CSV, the header once, every row once, a Link to the next page while rows remain.
    let url: string | null = '/v1/exports/rewards.csv?page_size=4';
    const rows: string[] = [];
    let pages = 0;
    while (url) {
      const res = await api('GET', url, { key: m.w.key });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/csv/);
      const lines = res.text.split('\r\n').filter((l) => l !== '');
      if (pages === 0)
        expect(lines.shift()).toBe(
          'id,type,status,amount,currency,referral_id,member_id,campaign_id,payment_id,reverses,created_at,approves_at,approved_at,paid_at,voided_at,void_reason,payout_id',
        );
      expect(Number(res.headers['x-row-count'])).toBe(lines.length);
      rows.push(...lines);
      pages++;
      const link = res.headers.link;
      url = link ? link.replace(/^<https?:\/\/[^/]+([^>]+)>; rel="next"$/, '$1') : null;
    }
    expect(rows).toHaveLength(6);
    expect(pages).toBe(2);
    expect(new Set(rows.map((r) => r.split(',')[0])).size).toBe(6);
    expect(rows.every((r) => /^[0-9a-f]{32},commission,processing|^[0-9a-f]{32},commission,approved,1\.00,USD,/.test(r))).toBe(true);
    const paged = await api('GET', '/v1/exports/payouts.csv?status=processing', { key: m.w.key });
    expect(paged.text.split('\r\n').filter((l) => l !== '')).toHaveLength(7);
    // A member whose name a spreadsheet would run as a formula is exported as text.
    m.expectOk(
      await m.json('POST', '/v1/members/', { identifier: '=HYPERLINK("http://x")', email: 'formula@example.com', first_name: '+1' }),
      201,
    );
    const members = (await api('GET', '/v1/exports/members.csv', { key: m.w.key })).text;
    expect(members).toContain(`"'=HYPERLINK(""http://x"")"`);
    expect(members).toContain(",'+1,");
    expect((await m.json('GET', '/v1/exports/secrets.csv')).status).toBe(404);
    expect((await m.json('GET', '/v1/exports/rewards.csv?cursor=bogus')).body).toEqual({ cursor: ['Invalid cursor.'] });
    expect((await m.json('GET', '/v1/exports/rewards.csv?page_size=10001')).status).toBe(400);
    // Reports: a range over 400 days, a bad metric or interval, both campaign and member.
    expect((await m.json('GET', '/v1/reports/timeseries/?metric=referrals&from=0&to=40000000')).body).toEqual({
      detail: 'A range is at most 400 days.',
    });
    expect((await m.json('GET', '/v1/reports/timeseries/?metric=likes')).status).toBe(400);
    expect((await m.json('GET', '/v1/reports/timeseries/?metric=referrals&interval=year')).status).toBe(400);
    expect((await m.json('GET', '/v1/reports/overview/?from=200&to=100')).body).toEqual({ detail: '`to` must not be before `from`.' });
    expect((await m.json('GET', '/v1/reports/members/?limit=0')).status).toBe(400);
    // A week series of 90 days: every bucket present, Mondays, zeros included.
    const weeks = m.expectOk(
      await m.json(
        'GET',
        `/v1/reports/timeseries/?metric=conversions&interval=week&from=${1_767_225_600}&to=${1_767_225_600 + 90 * 86_400}`,
      ),
    );
    expect(weeks.buckets).toHaveLength(14);
    expect(weeks.buckets.every((b: { start: number; value: number }) => new Date(b.start * 1000).getUTCDay() === 1 && b.value === 0)).toBe(
      true,
    );
  });
});
