// API representations: records -> the exact JSON objects of the specification.
import { formatCents } from './money';
import { lifecycleOf, type LedgerReward } from './lifecycle';
import { methodReadiness } from './payout-methods';
import { statsCurrency, type Campaign, type Member, type Referral, type Subscription } from './models';

export function campaignView(c: Campaign) {
  return {
    id: c.id,
    name: c.name,
    slug: c.slug,
    signup: c.signup,
    allows_credit: c.allows_credit,
    credit_amount: formatCents(c.credit_amount),
    credit_currency: c.credit_currency,
    allows_commission: c.allows_commission,
    commission_amount: formatCents(c.commission_amount),
    commission_currency: c.commission_currency,
    commission_months: c.commission_months,
    reward_threshold: formatCents(c.reward_threshold),
    referred_discount_type: c.referred_discount_type,
    referred_discount_amount: formatCents(c.referred_discount_amount),
    referred_discount_recurring: c.referred_discount_recurring,
    commission_type: c.commission_type,
    commission_percent: formatCents(c.commission_percent),
    hold_days: c.hold_days,
    approval: c.approval,
    min_payout: formatCents(c.min_payout),
    created_at: c.created_at,
  };
}

export function subscriptionView(s: Subscription) {
  return {
    id: s.id,
    unit_price: s.unit_price,
    currency: s.currency,
    status: s.status,
    email: s.email,
    next_bill_date: s.next_bill_date,
    last_bill_date: s.last_bill_date,
    // Stored as a DynamoDB map (unordered): written out in the specification's order.
    plan: {
      id: s.plan.id,
      name: s.plan.name,
      amount: s.plan.amount,
      currency: s.plan.currency,
      interval: s.plan.interval,
      frequency: s.plan.frequency,
      descriptor: s.plan.descriptor,
    },
  };
}

/** `campaign` and `subscription` are the resolved objects (null when absent or deleted). */
/** A member's stats, as the member object and the member portal show them. */
export function memberStatsView(m: Member, campaign: Campaign | null) {
  return {
    link_clicks: m.link_clicks,
    referrals: m.referrals,
    conversions: m.conversions,
    credit_earned: formatCents(m.credit_earned),
    commission_earned: formatCents(m.commission_earned),
    commission_pending: formatCents(m.commission_pending),
    commission_approved: formatCents(m.commission_approved),
    commission_held: formatCents(m.commission_held ?? 0),
    commission_paid: formatCents(m.commission_paid),
    currency: statsCurrency(campaign),
  };
}

/** A member's payout method and whether their payouts can go there now (docs/payouts.md "Members' methods"). */
export function payoutMethodView(m: Member) {
  const readiness = methodReadiness(m as unknown as Record<string, unknown>);
  return { payout_method: readiness.method, payout_method_ready: readiness.ready, payout_method_reason: readiness.reason };
}

export function memberView(m: Member, campaign: Campaign | null, subscription: Subscription | null) {
  return {
    id: m.id,
    identifier: m.identifier,
    email: m.email,
    first_name: m.first_name,
    last_name: m.last_name,
    code: m.code,
    stats: memberStatsView(m, campaign),
    // The specification's update example carries link_clicks at the top level too; every member
    // representation does, so clients see one shape.
    link_clicks: m.link_clicks,
    campaign: campaign ? campaignView(campaign) : null,
    subscription: subscription ? subscriptionView(subscription) : null,
    email_opt_out: m.email_opt_out,
    payout_email: m.payout_email,
    ...payoutMethodView(m),
    source: m.source,
    fraud_flags: m.fraud_flags ?? [],
    created_at: m.created_at,
  };
}

export function referralView(r: Referral) {
  const sum = (type: 'credit' | 'commission') => r.rewards.filter((w) => w.type === type).reduce((a, w) => a + w.amount, 0);
  return {
    id: r.id,
    member_id: r.member_id,
    user_identifier: r.user_identifier,
    created_at: r.created_at,
    converted_at: r.converted_at,
    is_converted: r.converted_at !== null,
    coupon_code: r.coupon_code,
    subscription: r.subscription ? subscriptionView(r.subscription) : null,
    source: r.source,
    sub: r.sub ?? null,
    campaign_id: r.campaign_id,
    reward_type: r.reward_type,
    reward_amount: formatCents(r.reward_amount),
    reward_percent: r.reward_percent === undefined || r.reward_percent === null ? null : formatCents(r.reward_percent),
    reward_threshold: formatCents(r.reward_threshold),
    currency: r.currency,
    stats: {
      // Rewards earned and standing: clawbacks and reversed credits are not counted (amounts net out).
      rewards: r.rewards.filter((w) => w.amount > 0 && w.reversed_at === undefined).length,
      credit_earned: formatCents(sum('credit')),
      commission_earned: formatCents(sum('commission')),
      currency: r.currency ?? 'USD',
    },
    rewards_completed: r.rewards_completed,
    fraud_flags: r.fraud_flags ?? [],
    rewards: r.rewards.map(rewardView),
  };
}

/** A Reward of the API (on its referral, and in `reward.*` events), with its lifecycle (docs/design/money.md "Reward lifecycle"). */
export function rewardView(w: Referral['rewards'][number]) {
  const life = lifecycleOf(w);
  return {
    id: w.id,
    type: w.type,
    amount: formatCents(w.amount),
    currency: w.currency,
    created_at: w.created_at,
    payment_id: w.payment_id,
    // Additive (refunds): see docs/rewards.md "Refunds and clawbacks".
    reverses: w.reverses ?? null,
    refund_id: w.refund_id ?? null,
    reversed_at: w.reversed_at ?? null,
    note: w.note ?? null,
    status: life.status,
    approves_at: life.approves_at,
    approved_at: life.approved_at,
    paid_at: life.paid_at,
    voided_at: life.voided_at,
    void_reason: life.void_reason,
    payout_id: life.payout_id,
  };
}

/** GET /v1/rewards/: a reward with the referral, member and campaign it belongs to. */
export function ledgerRewardView(r: LedgerReward) {
  const { referral_id, member_id, campaign_id, index: _index, version: _version, ...reward } = r;
  // `held_by`: the fraud flag that holds it, or last held it (docs/fraud.md "Holds").
  return {
    ...rewardView(reward as unknown as Referral['rewards'][number]),
    referral_id,
    member_id,
    campaign_id,
    held_by: r.held_by ?? null,
  };
}
