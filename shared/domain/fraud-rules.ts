// STUB (issue 27 seam; the rules helper replaces the bodies, keeping these signatures): the fraud rules as
// pure functions over recorded facts (docs/fraud.md "The rules"). Each returns the findings of the rules
// whose action is not `off`, each explaining itself in words.
import type { FraudFinding, FraudSettings } from './fraud';

/** A referral as the rules see it. */
export interface ReferralFact {
  id: string;
  member_id: string;
  /** Unix seconds. */
  created_at: number;
  /** The client address's digest (domain/visitors.ts ipHash): browser-script referrals only, else null. */
  ip_hash: string | null;
  /** The referred user's email: the user identifier when it is an address, else the subscription's; null when unknown. */
  email: string | null;
  converted_at: number | null;
  /** A payment of its subscription was refunded (a reward voided as refunded, or a clawback). */
  refunded: boolean;
}

/** An application as the rules see it. */
export interface ApplicationFact {
  id: string;
  campaign_id: string;
  /** Unix seconds. */
  created_at: number;
  ip_hash: string | null;
  email: string;
}

/** One UTC day of a member's report bucket. */
export interface MemberDay {
  /** `YYYY-MM-DD`. */
  day: string;
  link_clicks: number;
  conversions: number;
}

/** Referral-level rules (duplicate_ip, disposable_email) for `subject`, with the member's referrals of the window. */
export function evaluateReferral(
  _settings: FraudSettings,
  _subject: ReferralFact,
  _facts: { sameMember: ReferralFact[] },
  _now: number,
): FraudFinding[] {
  return [];
}

/** Application rules (duplicate_ip, disposable_email) for `subject`, with the account's applications of the window. */
export function evaluateApplication(
  _settings: FraudSettings,
  _subject: ApplicationFact,
  _facts: { recent: ApplicationFact[] },
  _now: number,
): FraudFinding[] {
  return [];
}

/** Member-level rules (click_spam, refund_rate, velocity) over the member's daily buckets and converted referrals. */
export function evaluateMember(
  _settings: FraudSettings,
  _memberId: string,
  _facts: { days: MemberDay[]; converted: ReferralFact[] },
  _now: number,
): FraudFinding[] {
  return [];
}

/**
 * The self_referral finding of a conversion whose payer is the referring member's own (the same payment
 * fingerprint or provider customer id), decided in the conversion's transaction.
 */
export function selfReferralFinding(
  referral: { id: string; member_id: string },
  match: { kind: 'payment_fingerprint' | 'customer_id'; provider: string },
): FraudFinding {
  const what = match.kind === 'payment_fingerprint' ? 'the same card' : 'the same customer account';
  return {
    rule: 'self_referral',
    subject: { type: 'referral', id: referral.id },
    member_id: referral.member_id,
    detail: `The referred subscription was paid with ${what} at ${match.provider} as the referring member's own subscription.`,
    evidence: { referral_ids: [referral.id] },
    dedupe_key: `self_referral#referral#${referral.id}`,
  };
}
