// Recorded facts for the fraud rules' tests, written straight to the table with the shapes the store writes
// (a referral with its time-ordered id and GSI1 keys, an application, a member's report bucket), so a test
// can place them in the past (the rules read the last 90 days).
import { randomBytes } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../../shared/store/client';
import { applicationKeys, keys } from '../../shared/store/table';

export const DAY = 86_400;
export const nowS = () => Math.floor(Date.now() / 1000);

/** A time-ordered id (UUIDv7 layout, 32 hex) created at `seconds`. */
export const idAt = (seconds: number) => (seconds * 1000).toString(16).padStart(12, '0') + randomBytes(10).toString('hex');

export interface SeedReward {
  type?: 'commission' | 'credit';
  amount?: number;
  status?: string;
  void_reason?: string | null;
  voided_at?: number | null;
  reverses?: string;
  created_at?: number;
}

export async function putReferral(
  accountId: string,
  memberId: string,
  o: {
    created_at: number;
    ip_hash?: string;
    user?: string;
    subscription_email?: string;
    converted_at?: number;
    rewards?: SeedReward[];
    fraud_flags?: { rule: string; at: number; detail: string }[];
  },
): Promise<string> {
  const id = idAt(o.created_at);
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: {
        ...keys.referral(accountId, id),
        type: 'Referral',
        id,
        member_id: memberId,
        user_identifier: o.user ?? `user-${id.slice(-8)}`,
        created_at: o.created_at,
        converted_at: o.converted_at ?? null,
        coupon_code: null,
        source: o.ip_hash ? 'js' : 'api',
        campaign_id: null,
        reward_type: 'commission',
        reward_amount: 1000,
        reward_threshold: 0,
        commission_months: null,
        currency: 'USD',
        rewards: (o.rewards ?? []).map((r) => ({
          id: idAt(r.created_at ?? o.created_at),
          type: r.type ?? 'commission',
          amount: r.amount ?? 1000,
          currency: 'USD',
          created_at: r.created_at ?? o.created_at,
          payment_id: `pay-${randomBytes(4).toString('hex')}`,
          status: r.status ?? 'pending',
          void_reason: r.void_reason ?? null,
          voided_at: r.voided_at ?? null,
          ...(r.reverses ? { reverses: r.reverses } : {}),
        })),
        rewards_completed: false,
        subscription: o.subscription_email ? { id: 'sub', email: o.subscription_email } : null,
        ...(o.ip_hash ? { ip_hash: o.ip_hash } : {}),
        ...(o.fraud_flags ? { fraud_flags: o.fraud_flags } : {}),
        gsi1pk: keys.referralsByMember(accountId, memberId),
        gsi1sk: id,
      },
    }),
  );
  return id;
}

export async function putApplication(accountId: string, o: { created_at: number; email: string; ip_hash?: string }): Promise<string> {
  const id = `app_${idAt(o.created_at)}`;
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: {
        ...applicationKeys.application(accountId, id),
        type: 'Application',
        id,
        campaign_id: 'c0ffee00',
        email: o.email,
        name: 'A Person',
        country: 'FR',
        answers: {},
        status: 'pending',
        created_at: o.created_at,
        fraud_flags: [],
        ...(o.ip_hash ? { ip_hash: o.ip_hash } : {}),
      },
    }),
  );
  return id;
}

/** A member's report bucket of one UTC day (`M#<member>`). */
export async function putMemberDay(
  accountId: string,
  memberId: string,
  day: string,
  counts: { link_clicks?: number; conversions?: number; referrals?: number },
): Promise<void> {
  await db().send(
    new PutCommand({ TableName: tableName(), Item: { ...keys.reportDay(accountId, `M#${memberId}`, day), type: 'ReportDay', ...counts } }),
  );
}
