// Issue 23 on payouts, through the API on DynamoDB Local:
// - #29: a payout email a spreadsheet would run as a formula (`=cmd|'/Ccalc'!A0@example.com`) is refused
//   wherever it is accepted (member create and update, the portal's PATCH me) with a field error in the
//   contract's shape; one stored before the rule never reaches a payout file.
// - #33: a payout above the maximum per payout (shared/domain/money-limits.ts) is held `open` with the
//   reason, never batched, and a batch or file that would carry one answers 409.
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { maxPayoutCents } from '../../shared/domain/money-limits';
import { approveReward } from '../../shared/flows/lifecycle';
import { db, tableName } from '../../shared/store/client';
import { getItem } from '../../shared/store/ops';
import { toPayout } from '../../shared/store/payouts';
import { toReferral } from '../../shared/store/referrals';
import { recordRewards } from '../../shared/store/rewards';
import { keys, moneyKeys } from '../../shared/store/table';
import { api } from '../support/api';
import { newAccount } from '../support/fixtures';

const HOSTILE = "=cmd|'/Ccalc'!A0@example.com";
const FORMULA_MESSAGE = 'A payout email cannot start with =, +, - or @ (a spreadsheet would run it as a formula).';
let serial = 0;

async function programme() {
  const { accountId, apiKey: key } = await newAccount('unlimited');
  const campaign = await api('POST', '/v1/campaigns/', {
    key,
    body: { name: `bounds-${++serial}`, allows_commission: true, commission_amount: '1.00', approval: 'manual' },
  });
  expect(campaign.status).toBe(201);
  const member = async (extra: Record<string, unknown> = {}) => {
    const who = `m-${++serial}`;
    const res = await api('POST', '/v1/members/', {
      key,
      body: { identifier: who, email: `${who}@example.com`, campaign: { id: campaign.body.id }, ...extra },
    });
    expect(res.status).toBe(201);
    return res.body as { id: string; code: string };
  };
  /** One commission of `cents` for the member, approved into their payout: the payout id. */
  const earn = async (m: { id: string; code: string }, cents: number) => {
    const ref = await api('POST', '/v1/referrals/', { key, body: { user_identifier: `u-${++serial}`, member_code: m.code } });
    const stored = toReferral(await getItem(keys.referral(accountId, ref.body.id)))!;
    const after = await recordRewards(
      accountId,
      stored,
      [{ payment_id: serial, type: 'commission', amount: cents, currency: 'USD' }],
      false,
      true,
    );
    return (await approveReward(accountId, after.rewards[0]!.id)).payout_id!;
  };
  return { accountId, key, member, earn };
}

describe('issue 23 #29: payout emails', () => {
  it.each([HOSTILE, '+1@example.com', '-1@example.com', '@x@example.com'])(
    'member create, member update and the portal refuse %j with a field error',
    async (evil) => {
      const p = await programme();
      const created = await api('POST', '/v1/members/', {
        key: p.key,
        body: { identifier: `x-${++serial}`, email: `x-${serial}@example.com`, payout_email: evil },
      });
      expect(created.status).toBe(400);
      expect(created.body).toEqual({ payout_email: [evil.startsWith('@x') ? expect.any(String) : FORMULA_MESSAGE] });

      const m = await p.member({ payout_email: 'jo.pay@example.com' });
      const patched = await api('PATCH', `/v1/members/${m.id}/`, { key: p.key, body: { payout_email: evil } });
      expect(patched.status).toBe(400);
      expect(patched.body).toEqual({ payout_email: [expect.any(String)] });

      const link = await api('POST', `/v1/members/${m.id}/portal-sessions/`, { key: p.key, body: {} });
      const opened = await api('POST', '/portal/v1/sessions/', { body: { token: new URL(link.body.url).hash.replace(/^#token=/, '') } });
      expect(opened.status).toBe(201);
      const me = await api('PATCH', '/portal/v1/me/', { key: opened.body.token, body: { payout_email: evil } });
      expect(me.status).toBe(400);
      expect(me.body).toEqual({ payout_email: [expect.any(String)] });
      // Nothing was stored.
      expect((await api('GET', `/v1/members/${m.id}/`, { key: p.key })).body.payout_email).toBe('jo.pay@example.com');
      // A plain address still goes through, its domain lower-cased.
      const fine = await api('PATCH', '/portal/v1/me/', { key: opened.body.token, body: { payout_email: "O'Brien+pay@Pay.Example.com" } });
      expect(fine.status).toBe(200);
      expect(fine.body.member.payout_email).toBe("O'Brien+pay@pay.example.com");
    },
  );

  it('an address stored before the rule is never put in a file: the batch skips it and says why', async () => {
    const p = await programme();
    const m = await p.member({ payout_email: 'jo.pay@example.com' });
    const payoutId = await p.earn(m, 2500);
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.member(p.accountId, m.id),
        UpdateExpression: 'SET payout_email = :e',
        ExpressionAttributeValues: { ':e': HOSTILE },
      }),
    );
    const batch = await api('POST', '/v1/payout-batches/', { key: p.key, body: { format: 'paypal', currency: 'USD' } });
    expect(batch.status).toBe(409);
    expect(batch.body.detail).toContain(`${payoutId}: the member's payout email is not a valid mailbox`);
    expect(toPayout(await getItem(moneyKeys.payout(p.accountId, payoutId)))!.status).toBe('due');
  });
});

describe('issue 23 #33: the maximum per payout', () => {
  const max = maxPayoutCents('USD');

  it('a payout above the maximum is held open with the reason, never batched; below it again, it is due', async () => {
    const p = await programme();
    const m = await p.member({ payout_email: 'big@pay.example.com' });
    // The report's 33.3-billion-dollar payout.
    const payoutId = await p.earn(m, 3_330_000_000_000);
    const held = await api('GET', `/v1/payouts/${payoutId}/`, { key: p.key });
    expect(held.body).toMatchObject({
      status: 'open',
      amount: '33300000000.00',
      failure_reason: expect.stringContaining('Held for review: above the maximum of 1,000,000 USD per payout'),
    });
    const all = await api('POST', '/v1/payout-batches/', { key: p.key, body: { format: 'wise', currency: 'USD' } });
    expect(all.status).toBe(409);
    const named = await api('POST', '/v1/payout-batches/', {
      key: p.key,
      body: { format: 'wise', currency: 'USD', payout_ids: [payoutId] },
    });
    expect(named.status).toBe(409);
    expect((await api('GET', '/v1/payouts/summary/', { key: p.key })).body).toMatchObject({ due: {}, open: { USD: '33300000000.00' } });
    // Exactly the maximum is payable.
    const other = await p.member({ payout_email: 'max@pay.example.com' });
    const atMax = await p.earn(other, max);
    expect((await api('GET', `/v1/payouts/${atMax}/`, { key: p.key })).body).toMatchObject({ status: 'due', failure_reason: null });
    // Voiding the bogus reward releases the hold.
    const rewardId = toPayout(await getItem(moneyKeys.payout(p.accountId, payoutId)))!.reward_ids[0]!;
    expect((await api('POST', `/v1/rewards/${rewardId}/void/`, { key: p.key, body: { reason: 'fraud' } })).status).toBe(200);
    expect((await api('GET', `/v1/payouts/${payoutId}/`, { key: p.key })).body).toMatchObject({
      status: 'open',
      amount: '0.00',
      failure_reason: null,
    });
    const batch = await api('POST', '/v1/payout-batches/', { key: p.key, body: { format: 'wise', currency: 'USD' } });
    expect(batch.status).toBe(201);
    expect(batch.body).toMatchObject({ payout_ids: [atMax], amount: '1000000.00' });
  });

  it('a due payout above the maximum from before the rule is skipped by a batch, and a batch holding one has no file', async () => {
    const p = await programme();
    const m = await p.member({ payout_email: 'legacy@pay.example.com' });
    const payoutId = await p.earn(m, 1000);
    const fine = await p.member({ payout_email: 'fine@pay.example.com' });
    const finePayout = await p.earn(fine, 1000);
    // As an amount written before the bound existed would be (the payout's item only: what a batch reads).
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: moneyKeys.payout(p.accountId, payoutId),
        UpdateExpression: 'SET amount = :a',
        ExpressionAttributeValues: { ':a': max + 1 },
      }),
    );
    const named = await api('POST', '/v1/payout-batches/', {
      key: p.key,
      body: { format: 'paypal', currency: 'USD', payout_ids: [payoutId] },
    });
    expect(named.status).toBe(409);
    expect(named.body.detail).toContain('above the maximum');
    const batch = await api('POST', '/v1/payout-batches/', { key: p.key, body: { format: 'paypal', currency: 'USD' } });
    expect(batch.status).toBe(201);
    expect(batch.body.payout_ids).toEqual([finePayout]);
    // A batch that took one before the rule: its file answers 409, not a file with it.
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: moneyKeys.payout(p.accountId, finePayout),
        UpdateExpression: 'SET amount = :a',
        ExpressionAttributeValues: { ':a': 3_330_000_000_000 },
      }),
    );
    const file = await api('GET', `/v1/payout-batches/${batch.body.id}/file`, { key: p.key });
    expect(file.status).toBe(409);
    expect(file.body.detail).toMatch(/above the maximum of 1000000\.00 USD per payout/);
  });
});
