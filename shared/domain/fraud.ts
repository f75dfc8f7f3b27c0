// Fraud rules (docs/fraud.md): their names, actions and default settings, the flag a rule records, and the
// API objects. Pure: no I/O. The rules themselves (pure functions over recorded facts, each explaining
// itself in words) are in domain/fraud-rules.ts.
//
// - A rule is `off`, `flag` (record a finding for an operator) or `hold` (record it and put the unpaid
//   commissions it touches in `held`, which approval and payouts skip until an operator releases or voids
//   them). A hold never releases by itself.
// - A flag is recorded twice: as `{rule, at, detail}` in the `fraud_flags` list of what it is about (the
//   referral, the application or the member), and as a review-queue item (FraudFlagRecord) with its
//   evidence, its status and the rewards it held.

export const FRAUD_RULES = ['self_referral', 'duplicate_ip', 'disposable_email', 'click_spam', 'refund_rate', 'velocity'] as const;
export type FraudRule = (typeof FRAUD_RULES)[number];
export const isFraudRule = (value: unknown): value is FraudRule => (FRAUD_RULES as readonly unknown[]).includes(value);

export const FRAUD_ACTIONS = ['off', 'flag', 'hold'] as const;
export type FraudAction = (typeof FRAUD_ACTIONS)[number];

/** A review-queue item's status: `open` until an operator released, voided or marked it reviewed. */
export const FRAUD_FLAG_STATUSES = ['open', 'released', 'voided', 'reviewed'] as const;
export type FraudFlagStatus = (typeof FRAUD_FLAG_STATUSES)[number];

/** What a flag is about. Referral-level rules flag a referral, member-level ones a member. */
export type FraudSubjectType = 'referral' | 'application' | 'member';

/** The settings of every rule: its action and its thresholds (docs/fraud.md "The rules"). */
export interface FraudSettings {
  self_referral: { action: FraudAction };
  /** More than `max_referrals` referrals or applications from one address digest in `window_hours` for one member. */
  duplicate_ip: { action: FraudAction; max_referrals: number; window_hours: number };
  disposable_email: { action: FraudAction };
  /** Clicks to conversions over `ratio`:1 with at least `min_clicks` clicks in `window_days`. */
  click_spam: { action: FraudAction; ratio: number; min_clicks: number; window_days: number };
  /** More than `max_percent`% of a member's converted referrals refunded in `window_days` (at least `min_conversions`). */
  refund_rate: { action: FraudAction; max_percent: number; min_conversions: number; window_days: number };
  /** A member's conversions in one day over `multiple`x their `mean_days` daily mean, and at least `min_conversions`, with `history_days` of history. */
  velocity: { action: FraudAction; multiple: number; min_conversions: number; mean_days: number; history_days: number };
}

export const DEFAULT_FRAUD_SETTINGS: FraudSettings = {
  self_referral: { action: 'hold' },
  duplicate_ip: { action: 'flag', max_referrals: 3, window_hours: 24 },
  disposable_email: { action: 'flag' },
  click_spam: { action: 'flag', ratio: 500, min_clicks: 1000, window_days: 7 },
  refund_rate: { action: 'hold', max_percent: 30, min_conversions: 5, window_days: 90 },
  velocity: { action: 'hold', multiple: 10, min_conversions: 20, mean_days: 30, history_days: 7 },
};

/** A finding as recorded on its subject: `fraud_flags: [{rule, at, detail}]`, the detail in words. */
export interface FraudFlag {
  rule: string;
  /** Unix seconds. */
  at: number;
  detail: string;
}

/**
 * What a rule found (domain/fraud-rules.ts), before it is recorded: the words, and the evidence an operator
 * checks (the referrals or applications counted, the figures compared).
 */
export interface FraudFinding {
  rule: FraudRule;
  subject: { type: FraudSubjectType; id: string };
  /** The member it concerns (null for an application not approved yet). */
  member_id: string | null;
  /** In words: "4 referrals from one network in 2 hours". */
  detail: string;
  evidence: FraudEvidence;
  /**
   * Makes a repeat of the same finding record nothing new: the rule, the subject and, for member-level
   * rules, the UTC day it was found (at most one flag per rule, member and day).
   */
  dedupe_key: string;
}

export interface FraudEvidence {
  referral_ids?: string[];
  application_ids?: string[];
  /** The figures the rule compared, by name (e.g. `{clicks: 1204, conversions: 2, ratio: 602}`). */
  figures?: Record<string, number>;
}

/** A review-queue item (GET /v1/fraud-flags/). */
export interface FraudFlagRecord {
  /** `ff_` + a time-ordered id. */
  id: string;
  rule: FraudRule;
  /** What the rule's setting was when it fired: `flag` or `hold`. */
  action: 'flag' | 'hold';
  status: FraudFlagStatus;
  subject_type: FraudSubjectType;
  subject_id: string;
  member_id: string | null;
  detail: string;
  evidence: FraudEvidence;
  /** The rewards this flag put in `held` (a hold only). */
  held_reward_ids: string[];
  /** How many of them are still held. */
  held_count: number;
  /** Unix seconds. */
  created_at: number;
  resolved_at: number | null;
  /** The operator's note when resolving. */
  note: string | null;
}

/** POST /v1/fraud-rules/preview/: what a rule with these settings would have done over the last 90 days. */
export interface FraudPreview {
  rule: FraudRule;
  action: FraudAction;
  window_days: 90;
  would_flag: number;
  would_hold: number;
  /** At most 10 findings, newest first: `{subject_type, subject_id, member_id, detail, at}`. */
  examples: { subject_type: FraudSubjectType; subject_id: string; member_id: string | null; detail: string; at: number }[];
  /** True when more facts existed than the preview reads (docs/fraud.md "Preview"). */
  partial: boolean;
}
