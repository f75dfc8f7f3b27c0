// A world paying through the rails, for the rails' fault and property tests (test/integration/rail-faults.test.ts,
// rail-property.test.ts): an account connected to the emulators, payees with a ready method and approved
// commissions of 1.00 (one due payout each), rail batches, and the emulators' signed deliveries replayed through
// the real intakes (POST /webhooks/{paypal|stripe-connect|wise}/{account_id}/), whose queued outcomes are then
// applied as the payout-rails worker applies them. As test/integration/rail-payouts.test.ts builds its own.
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { PaypalEmulator } from '../../infra/local/emulators/paypal-payouts';
import type { StripeEmulator } from '../../infra/local/emulators/stripe';
import type { WiseEmulator } from '../../infra/local/emulators/wise';
import { approveReward } from '../../shared/flows/lifecycle';
import { refreshMemberPayouts } from '../../shared/flows/payouts';
import { applyRailOutcomes } from '../../shared/flows/rail-payouts';
import type { RailWebhookMessage } from '../../shared/queue/queues';
import type { RailKind } from '../../shared/rails/definition';
import type { RailConnection } from '../../shared/rails/port';
import { createConnectedAccount } from '../../shared/rails/stripe/adapter';
import { db, tableName } from '../../shared/store/client';
import { getItem } from '../../shared/store/ops';
import { railConnection, saveRailConnection } from '../../shared/store/rail-connections';
import { toReferral } from '../../shared/store/referrals';
import { recordRewards } from '../../shared/store/rewards';
import { keys } from '../../shared/store/table';
import { api } from './api';
import { newAccount } from './fixtures';
import type { TestQueues } from './queues';
import { paypalConnection, stripeConnection, wiseConnection } from './rail-deliveries';

export interface Emulators {
  paypal?: PaypalEmulator;
  stripe?: StripeEmulator;
  wise?: WiseEmulator;
}

export interface RailWorld {
  accountId: string;
  key: string;
  campaignId: string;
  emulators: Emulators;
}

let serial = 0;
const tag = () => `${Date.now().toString(36)}${++serial}`;

/** A new account connected to every emulator given, with a manual-approval commission campaign. */
export async function railWorld(emulators: Emulators): Promise<RailWorld> {
  const { accountId, apiKey: key } = await newAccount('unlimited');
  if (emulators.paypal) await saveRailConnection(accountId, 'paypal', paypalConnection(emulators.paypal));
  if (emulators.stripe) await saveRailConnection(accountId, 'stripe', stripeConnection(emulators.stripe));
  if (emulators.wise) await saveRailConnection(accountId, 'wise', wiseConnection(emulators.wise));
  const campaign = await api('POST', '/v1/campaigns/', {
    key,
    body: { name: `rails-${tag()}`, allows_commission: true, commission_amount: '1.00', approval: 'manual' },
  });
  if (campaign.status !== 201) throw new Error(`campaign: ${campaign.status}`);
  return { accountId, key, campaignId: campaign.body.id, emulators };
}

/** Sets fields on a stored member item. */
async function setMemberFields(w: RailWorld, memberId: string, fields: Record<string, unknown>): Promise<void> {
  const names = Object.keys(fields);
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.member(w.accountId, memberId),
      UpdateExpression: `SET ${names.map((_, i) => `#f${i} = :v${i}`).join(', ')}`,
      ExpressionAttributeNames: Object.fromEntries(names.map((f, i) => [`#f${i}`, f])),
      ExpressionAttributeValues: Object.fromEntries(names.map((f, i) => [`:v${i}`, fields[f]])),
    }),
  );
}

/** A member paid through `method` (ready) at `payoutEmail`: its id and its referral (for more rewards). */
export async function railPayee(w: RailWorld, method: RailKind, payoutEmail: string): Promise<{ memberId: string; referralId: string }> {
  const n = tag();
  const member = await api('POST', '/v1/members/', {
    key: w.key,
    body: { identifier: `payee-${n}`, email: `payee-${n}@example.com`, campaign: { id: w.campaignId }, payout_email: payoutEmail },
  });
  if (member.status !== 201) throw new Error(`member: ${member.status}`);
  const memberId = member.body.id as string;
  const fields: Record<string, unknown> = { payout_method: method };
  if (method === 'stripe') {
    const connection = (await railConnection(w.accountId, 'stripe')) as RailConnection;
    const account = await createConnectedAccount(connection, memberId, payoutEmail);
    await w.emulators.stripe!.connect.onboard(account.id, 'complete');
    fields.stripe_account_id = account.id;
    fields.stripe_ready = true;
  }
  await setMemberFields(w, memberId, fields);
  const ref = await api('POST', '/v1/referrals/', { key: w.key, body: { user_identifier: `u-${n}`, member_code: member.body.code } });
  if (ref.status >= 300) throw new Error(`referral: ${ref.status}`);
  return { memberId, referralId: ref.body.id as string };
}

let paymentSerial = 0;

/** `count` approved commissions of 1.00 on the member's referral, and the member's payouts refreshed (due). */
export async function earn(w: RailWorld, payee: { memberId: string; referralId: string }, count: number): Promise<void> {
  const stored = toReferral(await getItem(keys.referral(w.accountId, payee.referralId)))!;
  const base = Date.now() * 100 + (++paymentSerial % 100) * 10;
  const planned = Array.from({ length: count }, (_, i) => ({
    payment_id: base * 10 + i,
    type: 'commission' as const,
    amount: 100,
    currency: 'USD',
  }));
  const after = await recordRewards(w.accountId, stored, planned, false, true);
  for (const r of after.rewards) await approveReward(w.accountId, r.id);
  await refreshMemberPayouts(w.accountId, payee.memberId);
}

export const payoutsOf = async (w: RailWorld, memberId: string) =>
  (await api('GET', `/v1/payouts/?member=${memberId}`, { key: w.key })).body.results as Record<string, any>[];
export const batchOf = async (w: RailWorld, id: string) =>
  (await api('GET', `/v1/payout-batches/${id}/`, { key: w.key })).body as Record<string, any>;
export const createRailBatch = (w: RailWorld, body: Record<string, unknown>) => api('POST', '/v1/payout-batches/', { key: w.key, body });

/** The member's paid payouts' sum, its paid rewards' sum and its commission_paid stat, in cents. */
export async function paidSums(w: RailWorld, memberId: string): Promise<{ payouts: number; rewards: number; stat: number }> {
  const payouts = (await payoutsOf(w, memberId))
    .filter((p) => p.status === 'paid')
    .reduce((a, p) => a + Math.round(Number(p.amount) * 100), 0);
  const rewards: Record<string, any>[] = [];
  let url: string | null = `/v1/rewards/?member=${memberId}&page_size=100`;
  while (url) {
    const res = await api('GET', url, { key: w.key });
    if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${JSON.stringify(res.body)}`);
    rewards.push(...(res.body.results as Record<string, any>[]));
    url = res.body.next ? String(res.body.next).replace(/^https?:\/\/[^/]+/, '') : null;
  }
  const paidRewards = rewards.filter((r) => r.status === 'paid').reduce((a, r) => a + Math.round(Number(r.amount) * 100), 0);
  const member = await getItem(keys.member(w.accountId, memberId));
  return { payouts, rewards: paidRewards, stat: Number(member?.commission_paid ?? 0) };
}

const INTAKE: Record<RailKind, string> = { paypal: 'paypal', stripe: 'stripe-connect', wise: 'wise' };

/**
 * Posts signed deliveries to the account's intake of `kind` (each must answer 200), then applies the
 * outcomes the intake queued, in order, as the payout-rails worker does.
 */
export async function deliver(
  w: RailWorld,
  queues: TestQueues,
  kind: RailKind,
  deliveries: readonly { rawBody: string; headers: Record<string, string> }[],
): Promise<void> {
  // One at a time, so the outcomes apply in the order delivered.
  for (const d of deliveries) {
    await queues.purge();
    const res = await api('POST', `/webhooks/${INTAKE[kind]}/${w.accountId}/`, { rawBody: Buffer.from(d.rawBody), headers: d.headers });
    if (res.status !== 200) throw new Error(`intake ${kind}: ${res.status} ${JSON.stringify(res.body)}`);
    for (const m of await queues.receiveAll('payout-rails')) {
      const hook = m.json as unknown as RailWebhookMessage;
      if (hook.kind === 'rail-webhook') await applyRailOutcomes(hook.account_id, hook.rail, hook.outcomes);
    }
  }
}
