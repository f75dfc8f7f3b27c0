// The records the store returns and the domain works with. Amounts are integer cents.
import type { RailKind } from './rail-kinds';
import type { SignupSettings } from './affiliates';
import type { FraudFlag } from './fraud';
import { referredDiscount, type DiscountTerms, type ReferredDiscount } from './discounts';

export interface CampaignTerms {
  allows_credit: boolean;
  credit_amount: number;
  credit_currency: string;
  allows_commission: boolean;
  commission_amount: number;
  commission_currency: string;
  commission_months: number | null;
  reward_threshold: number;
  /** docs/design/money.md "Commission terms": `fixed` (commission_amount per payment) or `percentage` (commission_percent of its amount excluding tax). */
  commission_type: CommissionType;
  /** Hundredths of a percent (1..10000 = 0.01%..100%); 0 for a fixed commission. */
  commission_percent: number;
  /** Days a commission stays pending (the refund window) before it is approved. */
  hold_days: number;
  /** `manual`: commissions wait for POST /v1/rewards/{id}/approve/ after their hold. */
  approval: ApprovalMode;
  /** Cents: a payout is due once it reaches this (and the member has a payout email). */
  min_payout: number;
}

export type CommissionType = 'fixed' | 'percentage';
export type ApprovalMode = 'auto' | 'manual';

/** The terms of campaigns stored before the money terms existed. */
export const MONEY_DEFAULTS = { commission_type: 'fixed', commission_percent: 0, hold_days: 30, approval: 'auto', min_payout: 0 } as const;

export interface Campaign extends CampaignTerms, DiscountTerms {
  id: string;
  name: string;
  /** Unique within the account: the campaign's part of its public page's address; null before one was set. */
  slug: string | null;
  /** Its public sign-up page (docs/affiliates.md); closed by default. */
  signup: SignupSettings;
  created_at: number;
  version: number;
  member_count: number;
}

/**
 * A subscription, payment or plan id as the payment provider names it: an integer for Paddle Classic, a
 * string (`sub_…`, `txn_…`, `in_…`, `pri_…`) for Paddle Billing and Stripe. The API shows it as it is.
 */
export type ProviderId = number | string;

/** A provider id as read back from an item: a string stays one, anything else is Classic's integer. */
export function storedProviderId(value: unknown): ProviderId {
  return typeof value === 'string' ? value : Number(value);
}

/** Orders provider ids: Classic's integers by value, string ids as strings (an account uses one form). */
export function compareProviderIds(a: ProviderId, b: ProviderId): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const x = String(a);
  const y = String(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

export interface Plan {
  id: ProviderId;
  name: string;
  amount: string;
  currency: string;
  interval: string | null;
  frequency: number | null;
  descriptor: string | null;
}

export interface Subscription {
  id: ProviderId;
  unit_price: string | null;
  currency: string;
  status: string;
  email: string;
  next_bill_date: string | null;
  last_bill_date: string | null;
  plan: Plan;
  created_at: number;
  member_id?: string | undefined;
  referral_id?: string | undefined;
  /** The stored item's version (this service's, never shown): writes that depend on what was read check it. */
  version?: number | undefined;
}

export interface Member {
  id: string;
  identifier: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  code: string;
  campaign_id: string | null;
  subscription_id: ProviderId | null;
  link_clicks: number;
  /** The member asked not to be emailed. */
  email_opt_out: boolean;
  referrals: number;
  conversions: number;
  credit_earned: number;
  commission_earned: number;
  /** Cents of commission by lifecycle status (docs/design/money.md); voided ones are in none. */
  commission_pending: number;
  commission_approved: number;
  /** Cents of commission held by a fraud rule (docs/fraud.md): in no other status stat. */
  commission_held: number;
  commission_paid: number;
  /** Where payouts are sent; a payout is due only once the member has one. */
  payout_email: string | null;
  /** The member's payout method (docs/payouts.md "Members' methods"); null: the file rail. */
  payout_method?: RailKind | null;
  /** The member's Stripe Express account (`acct_…`), created by the portal's "Set up payouts". */
  stripe_account_id?: string | null;
  /** Stripe reported the account able to receive transfers (Connect's account.updated). */
  stripe_ready?: boolean;
  /** `signup`: created by approving an application (docs/affiliates.md); `app`: by the operator's app or dashboard. */
  source: 'app' | 'signup';
  /** What the fraud rules found about the member (docs/fraud.md). */
  fraud_flags?: FraudFlag[];
  created_at: number;
  version: number;
}

/** One payment of a provider subscription (a webhook or the background sync reports it). */
export interface Payment {
  /** The provider's subscription payment id. */
  id: ProviderId;
  subscription_id: ProviderId;
  order_id: string | null;
  /** Cents, in `currency`. */
  amount: number;
  currency: string;
  /** Unix seconds. */
  paid_at: number;
  status: 'paid' | 'failed' | 'refunded';
  /** Cents. */
  refund_amount?: number;
  refund_type?: string;
  /** Cents of tax included in `amount`, when the provider says (percentage commissions exclude it). */
  tax?: number;
}

export type RewardType = 'credit' | 'commission';

// A reward's lifecycle (its rules are in domain/lifecycle.ts). `held`: a commission a fraud rule holds
// (docs/fraud.md "Holds") until an operator releases or voids it.
export const REWARD_STATUSES = ['pending', 'approved', 'paid', 'applied', 'voided', 'held'] as const;
export type RewardStatus = (typeof REWARD_STATUSES)[number];

export const VOID_REASONS = ['refunded', 'fraud', 'duplicate', 'manual'] as const;
export type VoidReason = (typeof VOID_REASONS)[number];

export interface Lifecycle {
  status: RewardStatus;
  /** Unix seconds at which a pending commission is approved by the job; null when approval is manual. */
  approves_at: number | null;
  approved_at: number | null;
  paid_at: number | null;
  voided_at: number | null;
  void_reason: VoidReason | null;
  payout_id: string | null;
  /**
   * The fraud flag (`ff_…`) that holds a `held` reward, kept when it leaves `held`, so a hold of the same
   * flag never takes it again (docs/fraud.md "Holds"); absent (or null) when no flag ever held it.
   */
  held_by?: string | null;
}

/** The lifecycle fields (domain/lifecycle.ts) are absent on rewards stored before it existed. */
export interface Reward extends Partial<Lifecycle> {
  id: string;
  type: RewardType;
  /** Negative for a clawback (a refund taking back part or all of the reward it `reverses`). */
  amount: number;
  currency: string;
  created_at: number;
  payment_id: ProviderId;
  /** Clawbacks: the reward taken back. */
  reverses?: string;
  /** Clawbacks and refund notes: the alert_id of the provider's refund alert. */
  refund_id?: string;
  /** A credit whose application was undone (its modifier deleted before billing) after a refund. */
  reversed_at?: number;
  /** What a refund did to this reward, in words (e.g. a credit already billed that stays). */
  note?: string;
}

export interface Referral {
  id: string;
  member_id: string;
  user_identifier: string;
  created_at: number;
  converted_at: number | null;
  coupon_code: string | null;
  source: 'app' | 'api' | 'js';
  campaign_id: string | null;
  /** The sub-id (a named link's slug) the referral came through; null or absent without one. */
  sub?: string | null;
  reward_type: RewardType | null;
  reward_amount: number;
  reward_threshold: number;
  commission_months: number | null;
  currency: string | null;
  rewards: Reward[];
  rewards_completed: boolean;
  /** Snapshot of the converted subscription, kept current by the subscription sync (one read per GET). */
  subscription: Subscription | null;
  /** Double-sided campaigns: the referred user's discount, copied from the campaign at creation. */
  referred_discount?: ReferredDiscount | null;
  /** A percentage commission: hundredths of a percent of each payment excluding tax (reward_amount is 0). */
  reward_percent?: number | null;
  /** The campaign's hold and approval at the referral's creation (absent on older referrals: 30 days, auto). */
  hold_days?: number;
  approval?: ApprovalMode;
  /** What the fraud rules found about the referral (docs/fraud.md); absent: nothing. */
  fraud_flags?: FraudFlag[];
  /** An open hold of a referral-level rule: the flag that holds its rewards, new ones included (docs/fraud.md). */
  fraud_hold?: string;
}

/** Which reward a referral made in `campaign` earns (docs/design/api-contract.md "Campaigns"). */
export function referralTerms(
  campaign: (CampaignTerms & Partial<DiscountTerms>) | null,
): Pick<
  Referral,
  | 'reward_type'
  | 'reward_amount'
  | 'reward_threshold'
  | 'commission_months'
  | 'currency'
  | 'referred_discount'
  | 'reward_percent'
  | 'hold_days'
  | 'approval'
> {
  const discount = campaign?.referred_discount_type ? referredDiscount(campaign as DiscountTerms, statsCurrency(campaign)) : null;
  if (campaign?.allows_credit) {
    return {
      reward_type: 'credit',
      reward_amount: campaign.credit_amount,
      reward_threshold: campaign.reward_threshold,
      commission_months: null,
      currency: campaign.credit_currency,
      referred_discount: discount,
      reward_percent: null,
      hold_days: campaign.hold_days,
      approval: campaign.approval,
    };
  }
  if (campaign?.allows_commission) {
    return {
      reward_type: 'commission',
      reward_amount: campaign.commission_type === 'percentage' ? 0 : campaign.commission_amount,
      reward_percent: campaign.commission_type === 'percentage' ? campaign.commission_percent : null,
      hold_days: campaign.hold_days,
      approval: campaign.approval,
      reward_threshold: campaign.reward_threshold,
      commission_months: campaign.commission_months,
      currency: campaign.commission_currency,
      referred_discount: discount,
    };
  }
  return {
    reward_type: null,
    reward_amount: 0,
    reward_threshold: campaign?.reward_threshold ?? 0,
    commission_months: null,
    currency: null,
    referred_discount: discount,
    reward_percent: null,
    hold_days: campaign?.hold_days ?? MONEY_DEFAULTS.hold_days,
    approval: campaign?.approval ?? MONEY_DEFAULTS.approval,
  };
}

/** Currency of the member's stats: the reward currency their campaign offers, USD without one. */
export function statsCurrency(campaign: CampaignTerms | null): string {
  if (!campaign) return 'USD';
  return campaign.allows_credit ? campaign.credit_currency : campaign.commission_currency;
}
