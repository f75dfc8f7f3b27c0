// The fraud rules end to end on the Paddle Classic emulator (docs/fraud.md "When the rules run"): the real
// handlers, DynamoDB Local, the local SQS with every worker behind pollers (the webhook fan-out hands the
// events to the fraud-screen worker). Each rule fires from what really happened (browser-script referrals
// from one address, a disposable address, refunds, clicks and conversions, with small thresholds set by
// PATCH /v1/fraud-rules/), and is asserted in the review queue in its words and on its subject; a hold keeps
// a commission out of approval and payouts until the flag is released, and then it reaches the payout.
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { scheduledJobs } from '../../functions/workers';
import { runScheduledJob } from '../../infra/local/pollers';
import { newApplicationId } from '../../shared/domain/applications';
import { ipHash } from '../../shared/domain/visitors';
import { issueJoinConfirmation } from '../../shared/flows/applications';
import { joinRequestExpiry, putJoinRequest } from '../../shared/store/applications';
import { db, tableName } from '../../shared/store/client';
import { dayOf } from '../../shared/store/reports';
import { keys } from '../../shared/store/table';
import { api } from '../support/api';
import { pollUntil } from '../support/fixtures';
import { paddleTenants, pipelineWorld, type Tenant } from '../support/paddle-tenant';

const world = pipelineWorld();
const {
  tenant: paddleTenant,
  json,
  deliver,
  campaign,
  member,
  referral,
  subscribed,
  getReferral,
  getMember,
} = paddleTenants(() => world.paddle);

let serial = 0;
const unique = (p: string) => `${p}-${++serial}`;
const DAY = 86_400;

async function tenant(rules: Record<string, unknown> = {}): Promise<Tenant> {
  const t = await paddleTenant();
  if (Object.keys(rules).length > 0) {
    const res = await json('PATCH', '/v1/fraud-rules/', t, rules);
    expect(res.status).toBe(200);
  }
  return t;
}

/** The flags of a filter once `n` are there. */
const flagsWhen = (t: Tenant, query: string, n: number) =>
  pollUntil(
    async () => {
      const res = await json('GET', `/v1/fraud-flags/?${query}`, t);
      return res.body.count === n && res.body.results.length === n ? res.body.results : null;
    },
    { timeoutMs: 15_000 },
  );

/** Converts a referral with a fresh subscription and waits for its first reward. */
async function convert(t: Tenant, referralId: string, email: string) {
  const sub = await subscribed(t, email);
  const res = await json('POST', `/v1/referrals/${referralId}/conversion/`, t, { subscription_id: sub.subscription.subscription_id });
  expect(res.status).toBe(200);
  const body = await pollUntil(async () => {
    const b = await getReferral(t, referralId);
    return b.rewards.length >= 1 ? b : null;
  });
  return { sub, referral: body };
}

describe('duplicate_ip', () => {
  it('the 4th browser-script referral from one address is held; its commission skips approval and payouts until released', async () => {
    const t = await tenant({ duplicate_ip: { action: 'hold' } });
    const c = await campaign(t, { allows_commission: true, commission_amount: '2.50', commission_currency: 'USD', hold_days: 0 });
    const m = await member(t, unique('ivy'), { campaign: { id: c.id }, payout_email: 'ivy@pay.example.com' });
    const other = await member(t, unique('oz'), { campaign: { id: c.id } });
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await api('POST', '/js/v1/referrals/', {
        key: t.publishableKey,
        body: { member_code: m.code, user_identifier: unique('visitor') },
        sourceIp: '198.51.100.23',
      });
      expect(res.status).toBe(200);
      ids.push(res.body.id);
    }
    // Another member's referral from the same address counts for nobody's window but its own.
    expect(
      (
        await api('POST', '/js/v1/referrals/', {
          key: t.publishableKey,
          body: { member_code: other.code, user_identifier: unique('visitor') },
          sourceIp: '198.51.100.23',
        })
      ).status,
    ).toBe(200);

    const [flag] = await flagsWhen(t, 'rule=duplicate_ip', 1);
    expect(flag).toMatchObject({
      rule: 'duplicate_ip',
      action: 'hold',
      status: 'open',
      subject_type: 'referral',
      subject_id: ids[3],
      member_id: m.id,
      detail: expect.stringMatching(/^4 referrals from one network in \d+ minutes? \(more than 3 in 24 hours\)\.$/),
      evidence: { referral_ids: [...ids].reverse(), figures: { referrals: 4, max_referrals: 3, window_hours: 24 } },
      held_reward_ids: [],
      held_count: 0,
    });
    const flagged = await getReferral(t, ids[3] as string);
    expect(flagged.fraud_flags).toEqual([{ rule: 'duplicate_ip', at: flag.created_at, detail: flag.detail }]);
    expect((await getReferral(t, ids[2] as string)).fraud_flags).toEqual([]);

    // The held referral converts: its commission is created held, by that flag.
    const { referral: converted } = await convert(t, ids[3] as string, `${unique('buyer')}@example.com`);
    const reward = converted.rewards[0];
    expect(reward).toMatchObject({ type: 'commission', amount: '2.50', status: 'held', payout_id: null });
    const holding = (await json('GET', `/v1/fraud-flags/${flag.id}/`, t)).body;
    expect(holding).toMatchObject({ held_reward_ids: [reward.id], held_count: 1 });
    expect((await getMember(t, m.id)).stats).toMatchObject({
      commission_held: '2.50',
      commission_pending: '0.00',
      commission_approved: '0.00',
    });

    // Approval refuses it, the hourly job passes it by, and no payout collects it; review is refused too.
    expect((await json('POST', `/v1/rewards/${reward.id}/approve/`, t)).status).toBe(409);
    const job = scheduledJobs.find((j) => j.name === 'RewardApprovals');
    await runScheduledJob(job as (typeof scheduledJobs)[number]);
    await world.queues.drained(['rewards']);
    expect((await getReferral(t, ids[3] as string)).rewards[0]).toMatchObject({ status: 'held', payout_id: null });
    expect((await json('GET', `/v1/payouts/?member=${m.id}`, t)).body.count).toBe(0);
    const review = await json('POST', `/v1/fraud-flags/${flag.id}/review/`, t, {});
    expect(review.status).toBe(409);
    expect(review.body.detail).toMatch(/still holds 1 reward/);

    // Released: its hold period (0 days) has passed, so it is approved into the member's payout at once.
    const released = await json('POST', `/v1/fraud-flags/${flag.id}/release/`, t, { note: 'A shared office network.' });
    expect(released.status).toBe(200);
    expect(released.body).toMatchObject({
      status: 'released',
      held_count: 0,
      held_reward_ids: [reward.id],
      note: 'A shared office network.',
    });
    const after = (await getReferral(t, ids[3] as string)).rewards[0];
    expect(after).toMatchObject({ id: reward.id, status: 'approved', payout_id: expect.any(String) });
    const payouts = (await json('GET', `/v1/payouts/?member=${m.id}`, t)).body;
    expect(payouts).toMatchObject({ count: 1, results: [{ id: after.payout_id, amount: '2.50' }] });
    expect((await getMember(t, m.id)).stats).toMatchObject({ commission_held: '0.00', commission_approved: '2.50' });
    // The referral is no longer under a hold: the counts say one flag, released.
    expect((await json('GET', '/v1/fraud-flags/?status=open', t)).body.count).toBe(0);
    expect((await json('GET', `/v1/fraud-flags/?status=released&member=${m.id}`, t)).body.count).toBe(1);
  });
});

describe('disposable_email', () => {
  it('a referred user at a disposable-address domain is flagged on the referral', async () => {
    const t = await tenant();
    const m = await member(t, unique('dee'));
    const r = await referral(t, `${unique('throwaway')}@mailinator.com`, m.code);
    const clean = await referral(t, `${unique('someone')}@example.com`, m.code);
    const [flag] = await flagsWhen(t, 'rule=disposable_email', 1);
    expect(flag).toMatchObject({
      action: 'flag',
      subject_type: 'referral',
      subject_id: r.id,
      member_id: m.id,
      detail: "The referred user's email address is at mailinator.com, a disposable-address service.",
      evidence: { referral_ids: [r.id] },
    });
    expect((await getReferral(t, r.id)).fraud_flags).toEqual([{ rule: 'disposable_email', at: flag.created_at, detail: flag.detail }]);
    await world.queues.drained(['webhook-events', 'fraud']);
    expect((await getReferral(t, clean.id)).fraud_flags).toEqual([]);
    // Reviewed by an operator: nothing was held, so it may be.
    expect((await json('POST', `/v1/fraud-flags/${flag.id}/review/`, t, {})).body).toMatchObject({ status: 'reviewed' });
  });
});

describe('refund_rate', () => {
  it('2 of 5 conversions refunded holds the member: the commissions left are held', async () => {
    const t = await tenant();
    const c = await campaign(t, { allows_commission: true, commission_amount: '1.00', commission_currency: 'USD' });
    const m = await member(t, unique('rex'), { campaign: { id: c.id } });
    // Five conversions at once (each its own checkout), then two of them refunded in full.
    const conversions = await Promise.all(
      [0, 1, 2, 3, 4].map(async () => {
        const r = await referral(t, unique('payer'), m.code);
        return { id: r.id, ...(await convert(t, r.id, `${unique('payer')}@example.com`)) };
      }),
    );
    await Promise.all(
      conversions.slice(0, 2).map(async (refunded) => {
        const out = await world.paddle.refund(refunded.sub.payment?.id as number, { deliver: false });
        await deliver(t, out.alerts);
      }),
    );
    const [flag] = await flagsWhen(t, 'rule=refund_rate', 1);
    expect(flag).toMatchObject({
      action: 'hold',
      subject_type: 'member',
      subject_id: m.id,
      member_id: m.id,
      detail: '2 of 5 referrals converted in the last 90 days were refunded: 40% (the limit is 30%, with at least 5 conversions).',
      evidence: {
        referral_ids: expect.arrayContaining(conversions.slice(0, 2).map((x) => x.id)),
        figures: { converted: 5, refunded: 2, percent: 40, window_days: 90 },
      },
    });
    expect((await getMember(t, m.id)).fraud_flags).toEqual([{ rule: 'refund_rate', at: flag.created_at, detail: flag.detail }]);
    // The three commissions not refunded are held by it (pending before), and counted on it.
    const held = await pollUntil(async () => {
      const f = (await json('GET', `/v1/fraud-flags/${flag.id}/`, t)).body;
      return f.held_count === 3 ? f : null;
    });
    expect(held.held_reward_ids).toHaveLength(3);
    for (const x of conversions.slice(2)) expect((await getReferral(t, x.id)).rewards[0]).toMatchObject({ status: 'held' });
    expect((await getMember(t, m.id)).stats).toMatchObject({ commission_held: '3.00', commission_pending: '0.00' });
    // Voided by the operator: the held commissions are voided as fraud.
    expect((await json('POST', `/v1/fraud-flags/${flag.id}/void/`, t, {})).body).toMatchObject({ status: 'voided', held_count: 0 });
    for (const x of conversions.slice(2))
      expect((await getReferral(t, x.id)).rewards[0]).toMatchObject({ status: 'voided', void_reason: 'fraud' });
  });
});

describe('click_spam and velocity', () => {
  it('a conversion after many clicks, and a conversion day far above the member history, are flagged on the member', async () => {
    const t = await tenant({
      click_spam: { action: 'flag', ratio: 2, min_clicks: 3, window_days: 1 },
      velocity: { action: 'flag', multiple: 2, min_conversions: 1, mean_days: 7, history_days: 1 },
    });
    const m = await member(t, unique('cal'));
    for (let i = 0; i < 5; i++)
      expect((await api('POST', '/js/v1/clicks/', { key: t.publishableKey, body: { code: m.code, visitor_id: `v${i}` } })).status).toBe(
        200,
      );
    // History for velocity: a referral of the member three days ago, in the report buckets.
    const now = Math.floor(Date.now() / 1000);
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...keys.reportDay(t.accountId, `M#${m.id}`, dayOf(now - 3 * DAY)), type: 'ReportDay', referrals: 1 },
      }),
    );
    const r = await referral(t, unique('fast'), m.code);
    const sub = await subscribed(t, `${unique('fast')}@example.com`);
    expect((await json('POST', `/v1/referrals/${r.id}/conversion/`, t, { subscription_id: sub.subscription.subscription_id })).status).toBe(
      200,
    );

    const [clicks] = await flagsWhen(t, 'rule=click_spam', 1);
    expect(clicks).toMatchObject({
      action: 'flag',
      subject_type: 'member',
      subject_id: m.id,
      detail: '5 clicks and 1 conversion in 1 day: 5 clicks per conversion (the limit is 2 clicks per conversion, with at least 3 clicks).',
      evidence: { figures: { clicks: 5, conversions: 1, ratio: 5, window_days: 1 } },
    });
    const [velocity] = await flagsWhen(t, 'rule=velocity', 1);
    expect(velocity).toMatchObject({
      action: 'flag',
      subject_type: 'member',
      subject_id: m.id,
      detail: expect.stringMatching(/^1 conversion today against none over the previous 7 days/),
      evidence: { referral_ids: [r.id], figures: { today: 1, mean: 0, multiple: 2, mean_days: 7 } },
    });
    const onMember = (await getMember(t, m.id)).fraud_flags.map((f: { rule: string }) => f.rule).sort();
    expect(onMember).toEqual(['click_spam', 'velocity']);
    expect((await json('GET', `/v1/fraud-flags/?member=${m.id}&status=open`, t)).body.count).toBe(2);
  });
});

describe('applications', () => {
  it('an applicant at a disposable address waits as pending in an automatic campaign, flagged on the application and in the queue', async () => {
    const t = await tenant();
    const c = await campaign(t, {
      allows_commission: true,
      commission_amount: '1.00',
      commission_currency: 'USD',
      signup: { enabled: true, approval: 'auto', terms_url: 'https://acme.example/terms' },
    });
    // The form's join request as the public form stores it, and its confirmation link as the email worker issues it.
    const now = Math.floor(Date.now() / 1000);
    const id = newApplicationId();
    const address = `${unique('applicant')}@yopmail.com`;
    await putJoinRequest({
      id,
      accountId: t.accountId,
      campaignId: c.id,
      email: address,
      name: 'Casey Jones',
      country: 'gb',
      payoutEmail: null,
      answers: {},
      ipHash: ipHash('203.0.113.9'),
      createdAt: now,
      expiresAt: joinRequestExpiry(now),
    });
    const url = await issueJoinConfirmation(t.accountId, id);
    const token = new URL(url as string).pathname.split('/')[3] as string;
    const page = await api('POST', `/join/confirm/${token}/`, {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      rawBody: '',
    });
    expect(page.status).toBe(200);

    const application = (await json('GET', `/v1/applications/${id}/`, t)).body;
    const detail = "The applicant's email address is at yopmail.com, a disposable-address service.";
    expect(application).toMatchObject({
      status: 'pending',
      member_id: null,
      fraud_flags: [{ rule: 'disposable_email', at: expect.any(Number), detail }],
    });
    const [flag] = await flagsWhen(t, 'rule=disposable_email', 1);
    expect(flag).toMatchObject({
      action: 'flag',
      status: 'open',
      subject_type: 'application',
      subject_id: id,
      member_id: null,
      detail,
      evidence: { application_ids: [id] },
    });
    // The queue item was made from the stored flag: the application's own list is not appended twice.
    await world.queues.drained(['webhook-events', 'fraud']);
    expect((await json('GET', `/v1/applications/${id}/`, t)).body.fraud_flags).toHaveLength(1);
  });
});
